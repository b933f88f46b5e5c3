// An SDK server (the per-request ToolServer /mcp makes) with one tools/call in flight over the SDK's in-memory
// transport, its handler running until its exchange is aborted: for the tests of what ends an exchange.
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { ToolServer } from '../../src/mcp/tool-server.ts';

export async function serverWithCallInFlight(): Promise<{ server: ToolServer; ended: Promise<unknown> }> {
  const server = new ToolServer({ name: 'test', version: '1' }, { capabilities: { tools: {} } });
  const ended = Promise.withResolvers<unknown>();
  const started = Promise.withResolvers<void>();
  server.setRequestHandler('tools/call', (_request, ctx) => {
    started.resolve();
    return new Promise((resolve) => {
      ctx.mcpReq.signal.addEventListener('abort', () => {
        // Why the call ended: the reason its signal was aborted with.
        ended.resolve(ctx.mcpReq.signal.reason);
        resolve({ content: [] });
      });
    });
  });
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.start();
  await client.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'anything', arguments: {} } });
  await started.promise;
  return { server, ended: ended.promise };
}
