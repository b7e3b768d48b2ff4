// What a failed console request's page is headed and where it leads back to: a missing account, key or endpoint said by name,
// with the way to the list it would have been in.

export interface FailurePage {
  readonly title: string;
  readonly back: { readonly href: string; readonly text: string };
}

const ACCOUNTS = { href: '/console/accounts', text: 'Back to the accounts' };

/** `params`: the failed page's path parameters (a key's page knows its account; an event's, its endpoint). */
export function failurePage(code: string, status: number, params: unknown): FailurePage {
  const { username, endpoint_id: endpointId } = (params ?? {}) as { username?: unknown; endpoint_id?: unknown };
  switch (code) {
    case 'account_not_found':
      return { title: 'No such account', back: ACCOUNTS };
    case 'key_not_found':
      return {
        title: 'No such key',
        back: typeof username === 'string'
          ? { href: `/console/accounts/${encodeURIComponent(username)}#keys`, text: `Back to the keys of ${username}` }
          : ACCOUNTS,
      };
    case 'webhook_endpoint_not_found':
      return { title: 'No such endpoint', back: { href: '/console/webhooks', text: 'Back to the endpoints' } };
    case 'webhook_event_not_found':
      return {
        title: 'No such event',
        back: typeof endpointId === 'string'
          ? { href: `/console/webhooks/${encodeURIComponent(endpointId)}`, text: 'Back to the endpoint' }
          : { href: '/console/webhooks', text: 'Back to the endpoints' },
      };
    case 'not_found':
      return { title: 'No such page', back: ACCOUNTS };
    case 'rate_limited':
      return { title: 'Too many requests', back: ACCOUNTS };
    default:
      // A refusal (bad input, a conflict) is the request's; only a 5xx is ours.
      return { title: status >= 500 ? 'Something went wrong' : 'The request was refused', back: ACCOUNTS };
  }
}
