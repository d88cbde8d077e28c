// boardgame.io server of benchmarks/bench_peer.py: socket.io transport, in-memory storage
// (the library's default), the lobby API on the same port. Prints its port once listening.
// Usage: NODE_ENV=production node server.js [port]
const { Server, Origins } = require('boardgame.io/server');
const { Rummy } = require('./game');

const server = Server({ games: [Rummy], origins: [Origins.LOCALHOST] });
const port = Number(process.argv[2] || 0);
server.run(port).then(({ appServer }) => {
  console.log(String(appServer.address().port));
});
