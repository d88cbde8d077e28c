// Load generator of benchmarks/bench_peer.py for the boardgame.io server: N games at once,
// each seat a boardgame.io client (socket.io) that plays its move as soon as an update says
// it is its turn (closed loop), or after an exponential think time (paced). A game is
// created and joined through the lobby API (credentials checked on every move); when it
// ends, the two seats start another one.
// Every game's first move must have come back before the warm-up starts (set-up is not
// timed). Prints one JSON line: moves completed in the window, its length, the server's CPU ticks
// (utime + stime of /proc/<pid>/stat) over it, and each move's latency in seconds (from the
// move sent to the acting seat's update that contains it).
// Usage: node load.js PORT SERVER_PID GAMES WARMUP_S SECONDS THINK_S SEED
const fs = require('fs');
const { Client } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { Rummy } = require('./game');

const [port, pid, games, warmup, seconds, think, seed] = process.argv.slice(2).map(Number);
const base = `http://127.0.0.1:${port}/games/rummy`;

function cpuTicks() {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
}

let rngState = seed >>> 0 || 1;
function uniform() { // xorshift32: a seeded think time, as the Python clients have
  rngState ^= rngState << 13; rngState >>>= 0;
  rngState ^= rngState >>> 17;
  rngState ^= rngState << 5; rngState >>>= 0;
  return (rngState + 1) / 4294967297;
}

async function post(url, body) {
  // a kept-alive connection the server closed meanwhile (its 5 s idle timeout) resets the
  // next request on it: try again on a new one
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(url, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
      return await res.json();
    } catch (e) {
      if (attempt >= 5) throw e;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

let ready = 0; // games whose first move came back: set up, connected, playing
let counting = false;
let stopped = false;
let moves = 0;
const latencies = [];

async function playGames() {
  let first = true;
  while (!stopped) {
    const { matchID } = await post(`${base}/create`, { numPlayers: 2 });
    const seats = [];
    for (const playerID of ['0', '1']) {
      const { playerCredentials } = await post(`${base}/${matchID}/join`,
        { playerID, playerName: `p${playerID}` });
      seats.push({ playerID, credentials: playerCredentials });
    }
    await new Promise((resolve) => {
      const clients = seats.map(({ playerID, credentials }) => {
        const client = Client({
          game: Rummy, numPlayers: 2, matchID, playerID, credentials, debug: false,
          // websocket from the start (socket.io's default begins with HTTP long-polling)
          multiplayer: SocketIO({ server: `http://127.0.0.1:${port}`,
            socketOpts: { transports: ['websocket'] } }),
        });
        let sentAt = 0;
        let sentState = -1;
        let acted = -1;
        const act = (state) => {
          if (stopped) return;
          sentAt = performance.now();
          sentState = state._stateID;
          if (state.G.stage === 'draw') client.moves.draw(); else client.moves.pass();
        };
        client.subscribe((state) => {
          if (!state || stopped) return;
          if (sentState >= 0 && state._stateID > sentState) {
            if (counting) { moves += 1; latencies.push((performance.now() - sentAt) / 1000); }
            sentState = -1;
            if (first) { first = false; ready += 1; }
          }
          if (state.ctx.gameover) { resolve(clients); return; }
          if (state.ctx.currentPlayer !== playerID || state._stateID === acted) return;
          acted = state._stateID;
          if (think > 0) setTimeout(() => act(state), -Math.log(uniform()) * think * 1000);
          else act(state);
        });
        client.start();
        return client;
      });
      const stopCheck = setInterval(() => { if (stopped) resolve(clients); }, 100);
      stopCheck.unref();
    }).then((clients) => clients.forEach((c) => c.stop()));
  }
}

async function main() {
  for (let i = 0; i < games; i++) playGames().catch((e) => { console.error(e); process.exit(1); });
  const setupUntil = performance.now() + 120000; // every game playing before the clock runs
  while (ready < games && performance.now() < setupUntil) {
    await new Promise((r) => setTimeout(r, 20));
  }
  if (ready < games) { console.error(`only ${ready} of ${games} games started`); process.exit(1); }
  await new Promise((r) => setTimeout(r, warmup * 1000));
  const t0 = performance.now();
  const c0 = cpuTicks();
  counting = true;
  await new Promise((r) => setTimeout(r, seconds * 1000));
  counting = false;
  const c1 = cpuTicks();
  const elapsed = (performance.now() - t0) / 1000;
  stopped = true;
  console.log(JSON.stringify({ moves, seconds: elapsed, cpu_ticks: c1 - c0, latencies }));
  setTimeout(() => process.exit(0), 200);
}

main();
