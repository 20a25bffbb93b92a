/** @hey-api/openapi-ts's SDK with its default fetch client, as its README sets it up: `client.setConfig`. */
import { client } from './client.gen.js';
import {
  MANUFACTURER_ID,
  MODULE_ID,
  PAGE_SIZE,
  type Sent,
  settings,
  targetOf,
  type WalkReport,
} from './report.js';
import { getManufacturerDetail, getModuleDetail, getModuleList } from './sdk.gen.js';

const { url, key } = settings(process.env);
client.setConfig({ baseUrl: url, auth: key });

/** hey-api's result has no response when the request failed before one came. */
function sent(response: Response | undefined, body: unknown): Sent {
  if (!response) throw new Error('the request got no response');
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
  const { data, response } = await getModuleList({
    query: { fields: ['name', 'hp'], include: ['tags'], limit: PAGE_SIZE, cursor },
  });
  pages.push(sent(response, data));
  cursor = data?.page.next_cursor ?? undefined;
} while (cursor !== undefined && pages.length < 20);

const module = await getModuleDetail({ path: { id: MODULE_ID }, query: { include: ['ins', 'tags'] } });
const manufacturer = await getManufacturerDetail({
  path: { id: MANUFACTURER_ID },
  query: { include: ['modules'] },
});
const report: WalkReport = {
  pages,
  module: sent(module.response, module.data),
  manufacturer: sent(manufacturer.response, manufacturer.data),
};
console.log(JSON.stringify(report));
