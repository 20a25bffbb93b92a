/** openapi-typescript's types and openapi-fetch, as their READMEs use them: `createClient<paths>`. */
import createClient from 'openapi-fetch';
import {
  MANUFACTURER_ID,
  MODULE_ID,
  PAGE_SIZE,
  type Sent,
  settings,
  targetOf,
  type WalkReport,
} from './report.js';
import type { paths } from './schema.js';

const { url, key } = settings(process.env);
const client = createClient<paths>({ baseUrl: url, headers: { Authorization: `Bearer ${key}` } });

function sent(response: Response, body: unknown): Sent {
  return {
    target: targetOf(response.url),
    status: response.status,
    etag: response.headers.get('etag'),
    acceptEncoding: response.headers.get('content-encoding') ?? 'identity',
    body,
  };
}

const pages: Sent[] = [];
let cursor: string | undefined;
do {
  const { data, response } = await client.GET('/modules', {
    params: { query: { fields: ['name', 'hp'], include: ['tags'], limit: PAGE_SIZE, cursor } },
  });
  pages.push(sent(response, data));
  cursor = data?.page.next_cursor ?? undefined;
} while (cursor !== undefined && pages.length < 20);

const module = await client.GET('/modules/{id}', {
  params: { path: { id: MODULE_ID }, query: { include: ['ins', 'tags'] } },
});
const manufacturer = await client.GET('/manufacturers/{id}', {
  params: { path: { id: MANUFACTURER_ID }, query: { include: ['modules'] } },
});
const report: WalkReport = {
  pages,
  module: sent(module.response, module.data),
  manufacturer: sent(manufacturer.response, manufacturer.data),
};
console.log(JSON.stringify(report));
