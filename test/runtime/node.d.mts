/** Types of node.mjs (plain JavaScript, so `npm test` runs it without a loader). */
export declare const LAMBDA_NODE: { major: number; version: string };
export declare const PREVIOUS_LAMBDA_NODE: { major: number; version: string };
export declare function nodeCache(): string;
export declare function nodeBinary(version: string): string;
