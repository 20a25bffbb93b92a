/**
 * Orval's fetch client (`client: 'fetch'`, the base URL given to Orval as `baseUrl`): the key goes with each call's
 * RequestInit.
 */
import {
  getGetManufacturerDetailUrl,
  getGetModuleDetailUrl,
  getGetModuleListUrl,
  getManufacturerDetail,
  getModuleDetail,
  getModuleList,
} from './api.js';
import {
  MANUFACTURER_ID,
  MODULE_ID,
  PAGE_SIZE,
  type Sent,
  settings,
  targetOf,
  type WalkReport,
} from './report.js';

const { key } = settings(process.env);
const init: RequestInit = { headers: { Authorization: `Bearer ${key}` } };

function sent(url: string, answer: { status: number; headers: Headers; data: unknown }): Sent {
  return {
    target: targetOf(url),
    status: answer.status,
    etag: answer.headers.get('etag'),
    acceptEncoding: answer.headers.get('content-encoding') ?? 'identity',
    body: answer.data,
  };
}

const pages: Sent[] = [];
let cursor: string | undefined;
do {
  const params = { fields: ['name', 'hp'], include: ['tags'], limit: PAGE_SIZE, cursor } as const;
  const answer = await getModuleList(
    { ...params, fields: [...params.fields], include: [...params.include] },
    init,
  );
  pages.push(
    sent(
      getGetModuleListUrl({ ...params, fields: [...params.fields], include: [...params.include] }),
      answer,
    ),
  );
  cursor = answer.status === 200 ? (answer.data.page.next_cursor ?? undefined) : undefined;
} while (cursor !== undefined && pages.length < 20);

const moduleParams = { include: ['ins' as const, 'tags' as const] };
const manufacturerParams = { include: ['modules' as const] };
const report: WalkReport = {
  pages,
  module: sent(
    getGetModuleDetailUrl(MODULE_ID, moduleParams),
    await getModuleDetail(MODULE_ID, moduleParams, init),
  ),
  manufacturer: sent(
    getGetManufacturerDetailUrl(MANUFACTURER_ID, manufacturerParams),
    await getManufacturerDetail(MANUFACTURER_ID, manufacturerParams, init),
  ),
};
console.log(JSON.stringify(report));
