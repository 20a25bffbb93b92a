/**
 * The AWS SDK's DynamoDB calls in the request path's transport shape (proxy/quota/dynamo-transport.ts): a
 * reference to compare the lean client against — answer for answer in the tests, CPU per call in bench
 * section 8. Never on the request path: the proxy has one client, lean signed requests (issue 31).
 */
import { type DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { CounterTransport, Item } from '../../proxy/quota/dynamo-transport.js';

/**
 * @example const reference = sdkCounterTransport(dynamoClient({ endpoint }));
 */
export function sdkCounterTransport(client: DynamoDBClient): CounterTransport {
  return {
    async updateItem(input, signal) {
      try {
        const response = await client.send(new UpdateItemCommand(input), { abortSignal: signal });
        return { ok: true, attributes: response.Attributes ?? {} };
      } catch (error) {
        const { name, Item: item } = error as { name?: string; Item?: Item };
        if (name === 'ConditionalCheckFailedException') return { ok: false, item };
        throw error;
      }
    },
    async getItem(input, signal) {
      return (await client.send(new GetItemCommand(input), { abortSignal: signal })).Item;
    },
  };
}
