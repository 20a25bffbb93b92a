/**
 * dynalite alone, in a process of its own: section 10's keys and counters. Its request handling is
 * synchronous work of seconds under a flood; in the bench process it would hold back the S3 and Secrets
 * Manager stand-ins' answers too, and time the harness instead of the function.
 */
import { startDynamo } from '@catalogue/local-aws';
import { main, onStop, ready } from './child.js';

main(async () => {
  const dynamo = await startDynamo();
  onStop(() => dynamo.dispose());
  ready({ endpoint: dynamo.endpoint });
});
