// Type-level guarantees of the client: each wrong call below must stay a compile error. `npm test` runs tsc --noEmit first,
// and an `@ts-expect-error` on a line that compiles is itself an error, so loosening a type fails the build.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AccountApiClient, AccountApiError, type ErrorCode, type ServerErrorCode, type Settings, type TimezoneList, type User } from '../../client/src/index.ts';

// Never called: these lines exist for the type checker. Running them would send requests.
async function wrongCalls(client: AccountApiClient): Promise<void> {
  // @ts-expect-error updateSettings takes { timezone }, not a misspelt key
  await client.updateSettings({ tz: 'x' });
  // @ts-expect-error timezone is required
  await client.updateSettings({});
  // @ts-expect-error timezone is a string
  await client.updateSettings({ timezone: 1 });
  // @ts-expect-error name is required
  await client.updateUser({});
  // @ts-expect-error updateUser changes the name only
  await client.updateUser({ name: 'A', timezone: 'UTC' });
  // @ts-expect-error getUser takes no arguments
  await client.getUser(1);
  // @ts-expect-error getSettings takes no arguments
  await client.getSettings('alice');
  // @ts-expect-error sayHello needs the name to echo
  await client.sayHello();
  // @ts-expect-error the name is a string
  await client.sayHello({ name: 'x' });
  // @ts-expect-error hello takes no arguments
  await client.hello('x');
  // @ts-expect-error there is no endpoint for deleting
  await client.deleteUser();
  // @ts-expect-error envelope('POST /settings') needs its body
  await client.envelope('POST /settings');
  // @ts-expect-error GET /user takes no body
  await client.envelope('GET /user', { name: 'x' });
  // @ts-expect-error the body of POST /settings is { timezone }
  await client.envelope('POST /settings', { name: 'x' });
  // @ts-expect-error there is no DELETE /user
  await client.envelope('DELETE /user');
}

function wrongOptions(): void {
  // @ts-expect-error sandbox is a boolean
  new AccountApiClient({ sandbox: 'yes' });
  // @ts-expect-error the option is timeoutMs
  new AccountApiClient({ timeout: 5000 });
  // @ts-expect-error retries is a number
  new AccountApiClient({ retries: '2' });
  // @ts-expect-error the key option is apiKey
  new AccountApiClient({ username: 'alice', key: 'aapi_live_x' });
}

async function typedResults(client: AccountApiClient): Promise<void> {
  const user: User = await client.getUser();
  const id: number = user.user_id;
  // @ts-expect-error user_id is a number
  const idText: string = user.user_id;
  // @ts-expect-error a user has no email field
  void user.email;
  const settings: Settings = await client.updateSettings({ timezone: 'UTC' });
  const list: TimezoneList = await client.listTimezones();
  const first: string | undefined = list.timezones[0];
  // @ts-expect-error listTimezones returns { timezones, description }, not the bare array
  list.map((zone: string) => zone);
  const envelope = await client.envelope('GET /settings/timezones');
  const description: string = envelope.meta.description;
  const zones: string[] = envelope.data;
  const updated: Settings = (await client.envelope('POST /settings', { timezone: 'UTC' })).data;
  // @ts-expect-error the data of GET /user is a User, not a TimezoneList
  const notAList: TimezoneList = (await client.envelope('GET /user')).data;
  void [id, idText, settings, first, description, zones, updated, notAList];
}

function errorCodes(error: AccountApiError): void {
  const status: number = error.status;
  const field: string | undefined = error.field;
  const requestId: string | undefined = error.requestId;
  const retryAfterSeconds: number | undefined = error.retryAfterSeconds;
  // @ts-expect-error field may be absent
  const alwaysField: string = error.field;
  // Open-ended: a code that a newer server adds is still a valid ErrorCode.
  const future: ErrorCode = 'a_code_added_later';
  const known: ServerErrorCode = 'invalid_timezone';
  // @ts-expect-error the documented codes are a closed union: a typo is caught
  const typo: ServerErrorCode = 'invalid_timezon';
  void [status, field, requestId, retryAfterSeconds, alwaysField, future, known, typo];
}

test('the type-level checks in this file compile (tsc --noEmit, run by npm test, is what enforces them)', () => {
  for (const check of [wrongCalls, wrongOptions, typedResults, errorCodes]) assert.equal(typeof check, 'function');
});
