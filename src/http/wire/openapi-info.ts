// What both OpenAPI documents (the public one and the admin API's) say about the project itself: its licence and whom to ask.

// LICENSE at the repository's root, and `license` in package.json; test/e2e/openapi.test.ts holds the three together. OpenAPI
// 3.1 names a licence by its SPDX identifier (no URL to fetch).
export const DOCUMENT_LICENSE = { name: 'Apache License 2.0', identifier: 'Apache-2.0' } as const;

// No address is published for the project; whoever runs this server answers for it, and asks for the request's id.
export const DOCUMENT_CONTACT = { name: 'The operators of this server (quote the X-Request-Id of the answer in question)' } as const;
