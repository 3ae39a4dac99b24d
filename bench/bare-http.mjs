// The baseline for the JSON-RPC figures: a bare node:http server that answers every POST with a fixed
// JSON-RPC reply, as cheap as an HTTP server on this machine gets. Prints its port on stdout.
import { createServer } from 'node:http';

const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { nodeID: 'NodeID-baseline' } });
const server = createServer({ keepAlive: true }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
