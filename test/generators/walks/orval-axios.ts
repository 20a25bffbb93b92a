/** Orval's default client (axios functions), as its docs set it up: axios's defaults carry the base URL and key. */
import axios, { type AxiosResponse } from 'axios';
import { getManufacturerDetail, getModuleDetail, getModuleList } from './api.js';
import {
  MANUFACTURER_ID,
  MODULE_ID,
  PAGE_SIZE,
  type Sent,
  settings,
  targetOf,
  type WalkReport,
} from './report.js';

const { url, key } = settings(process.env);
axios.defaults.baseURL = url;
axios.defaults.headers.common.Authorization = `Bearer ${key}`;

function sent(response: AxiosResponse): Sent {
  const header = (name: string) => {
    const value: unknown = response.headers[name];
    return typeof value === 'string' ? value : null;
  };
  return {
    target: targetOf(axios.getUri(response.config)),
    status: response.status,
    etag: header('etag'),
    acceptEncoding: String(response.request.getHeader('accept-encoding')),
    body: response.data,
  };
}

const pages: Sent[] = [];
let cursor: string | undefined;
do {
  const response = await getModuleList({
    fields: ['name', 'hp'],
    include: ['tags'],
    limit: PAGE_SIZE,
    cursor,
  });
  pages.push(sent(response));
  cursor = response.data.page.next_cursor ?? undefined;
} while (cursor !== undefined && pages.length < 20);

const report: WalkReport = {
  pages,
  module: sent(await getModuleDetail(MODULE_ID, { include: ['ins', 'tags'] })),
  manufacturer: sent(await getManufacturerDetail(MANUFACTURER_ID, { include: ['modules'] })),
};
console.log(JSON.stringify(report));
