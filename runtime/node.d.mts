/** Types of node.mjs (plain JavaScript, so that any Node.js from 20 on runs it without a loader). */
export declare const LAMBDA_NODE: { major: number; version: string };
export declare const PREVIOUS_LAMBDA_NODE: { major: number; version: string };
export declare function nodeCache(): string;
export declare function sizeOf(path: string): number;
export declare function nodePackage(platform?: string, arch?: string): string;
export declare class NodeInstallError extends Error {}
export declare function nodeBinary(version: string, say?: (line: string) => void): string;
