// node:http as a plain module. Importing it as ESM makes Node build its module namespace, which reads every export,
// and a few of them (WebSocket, MessageEvent...) load the whole of undici on first read, a cost paid by every command
// that sends a request, for a fetch implementation nothing of ours uses.
const http = process.getBuiltinModule('node:http');

export const { Agent, createServer, request } = http;
export type Agent = import('node:http').Agent;
