/**
 * The local stack's protocol servers for the end-to-end run: s3rver (bucket created) and dynalite (tables
 * created, one partner key registered with huge limits), in one process of their own.
 * argv: <s3 data directory> <dynalite data directory>
 */

import { startDynamo, startS3 } from '@catalogue/local-aws';
import { createTables } from '../../admin/tables.js';
import { dynamoClient, leanDynamo } from '../../aws/sdk.js';
import { registerKey } from '../../test/helpers/admin.js';
import { BENCH_KEY, HUGE_LIMITS, STACK_BUCKET, STACK_TABLES } from '../settings.js';
import { main, onStop, ready } from './child.js';

main(async () => {
  const [s3Directory, dynamoDirectory] = process.argv.slice(2);
  const s3 = await startS3(STACK_BUCKET, { directory: s3Directory! });
  onStop(() => s3.dispose());
  const dynamo = await startDynamo({ directory: dynamoDirectory! });
  onStop(() => dynamo.dispose());
  const client = dynamoClient({ endpoint: dynamo.endpoint });
  const lean = leanDynamo(dynamo.endpoint);
  try {
    await createTables(client, STACK_TABLES);
    await registerKey({ dynamo: lean, ...STACK_TABLES }, BENCH_KEY, {
      tier: 'partner',
      limits: HUGE_LIMITS,
      label: 'bench',
    });
  } finally {
    client.destroy();
    await lean.close();
  }
  ready({ s3Endpoint: s3.endpoint, dynamoEndpoint: dynamo.endpoint, bucket: STACK_BUCKET });
});
