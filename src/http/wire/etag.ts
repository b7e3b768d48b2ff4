// Conditional GET: does an If-None-Match header name the current entity tag (RFC 9110 weak comparison)?

export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const current = opaque(etag);
  return ifNoneMatch.split(',').some((candidate) => candidate.trim() === '*' || opaque(candidate) === current);
}
