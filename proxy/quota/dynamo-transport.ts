/**
 * How the quota meter and the key store reach DynamoDB: two calls and their answer shape. The request path has
 * one implementation, lean signed requests (dynamo-lean.ts); the meter's logic (dynamo.ts) and the key lookups
 * (keys/dynamo.ts) are written against this interface, so tests can wrap it (count calls, inject answers AWS
 * gives and dynalite does not). The input shapes are the SDK's types (DynamoDB's JSON protocol takes them as
 * they are); nothing of the SDK is loaded.
 */
import type { AttributeValue, GetItemCommandInput, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';

export type Item = Record<string, AttributeValue>;

/**
 * What an UpdateItem came to. A failed condition is an answer, not a fault: `item` is the item as it was
 * (`ReturnValuesOnConditionCheckFailure: ALL_OLD`), when the server returned it (AWS does, dynalite does not).
 */
export type UpdateOutcome = { ok: true; attributes: Item } | { ok: false; item: Item | undefined };

export interface CounterTransport {
  /**
   * One UpdateItem, never sent again once it may have landed. Throws an error named after the AWS error code
   * (or network failure) otherwise, with `status` the HTTP status when there was an answer.
   */
  updateItem(input: UpdateItemCommandInput, signal?: AbortSignal): Promise<UpdateOutcome>;
  /** One GetItem: the item, or undefined when there is none. Throws as `updateItem` does. */
  getItem(input: GetItemCommandInput, signal?: AbortSignal): Promise<Item | undefined>;
}
