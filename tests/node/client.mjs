// A Node.js client of rummy_api.v1.GameService written from the .proto alone:
// it plays a game against a server bot, decodes a google.rpc.ErrorInfo detail (of Meld and
// of its dry run CheckMeld), asks GetLegalActions and GetHint, resumes an event stream, and
// lists the services by reflection. Usage:
//   node client.mjs HOST:PORT PROTO_DIR GOOGLE_PROTO_DIR
// Prints "ok N checks" and exits 0, or prints the failed check and exits 1.
import { fileURLToPath } from "node:url";
import path from "node:path";
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import protobufjs from "protobufjs";

const [address, protoDir, googleDir, adminToken] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
// keepCase: the proto's snake_case names; longs: String keeps 64-bit values exact;
// enums: String sends and receives enum names
const options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };
const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(
  ["rummy_api/v1/game_service.proto", "google/rpc/status.proto",
   "google/rpc/error_details.proto", "reflection_v1alpha.proto"],
  { ...options, includeDirs: [protoDir, googleDir, path.join(here, "protos")] }));

let checks = 0;
function check(ok, what) {
  if (!ok) { console.log(`FAILED: ${what}`); process.exit(1); }
  checks += 1;
}
const stub = new pkg.rummy_api.v1.GameService(address, grpc.credentials.createInsecure());
const call = (method, request) => new Promise((resolve, reject) =>
  stub[method](request, (err, reply) => (err ? reject(err) : resolve(reply))));

// decode the rich status detail of an error (trailer grpc-status-details-bin) with the
// google.rpc protos: a google.rpc.Status whose details hold one google.rpc.ErrorInfo
const gproto = new protobufjs.Root().loadSync([path.join(googleDir, "google/rpc/status.proto"),
  path.join(googleDir, "google/rpc/error_details.proto")], { keepCase: true });
function errorInfo(err) {
  const raw = err.metadata.get("grpc-status-details-bin")[0];
  const status = gproto.lookupType("google.rpc.Status").decode(raw);
  const any = status.details.find((d) => d.type_url.endsWith("google.rpc.ErrorInfo"));
  return { code: status.code, message: status.message,
           info: gproto.lookupType("google.rpc.ErrorInfo").decode(any.value) };
}

const created = await call("CreateGame", {
  seats: [{ kind: "SEAT_KIND_HUMAN", name: "node" }, { kind: "SEAT_KIND_BOT", strategy: "random" }],
  variants: { target_score: "30" }, seed: "4611686018427387903",  // 2**62 - 1: exact as a string
  admin_token: adminToken,  // a chosen seed with a human seat needs the admin token
});
check(created.game_id.length > 0 && created.tokens.length === 1, "CreateGame gives one token");
const token = created.tokens[0].token;
const gameId = created.game_id;

// an illegal meld: cards not in the hand (R5.4), decoded from the ErrorInfo detail
try {
  await call("Meld", { game_id: gameId, token, table: [{ cards: ["KS", "KH", "KD"] }] });
  check(false, "an illegal meld must be refused");
} catch (err) {
  check(err.code === grpc.status.FAILED_PRECONDITION || err.code === grpc.status.PERMISSION_DENIED,
        `illegal meld refused with a rule status, got ${err.code}`);
  const { info } = errorInfo(err);
  check(info.domain === "rummy" && info.reason.length > 0, "ErrorInfo has domain and reason");
  check(/^R\d/.test(info.metadata.rule || ""), `ErrorInfo carries the rule id: ${info.metadata.rule}`);
  check(err.metadata.get("rummy-rule")[0] === info.metadata.rule, "the rummy-rule trailer agrees");
}

// the dry run of that meld: the same refusal, the same rule id, nothing appended
try {
  await call("CheckMeld", { game_id: gameId, token, table: [{ cards: ["KS", "KH", "KD"] }] });
  check(false, "CheckMeld must refuse the illegal meld");
} catch (err) {
  const { info } = errorInfo(err);
  check(/^R\d/.test(info.metadata.rule || ""), `CheckMeld names the rule: ${info.metadata.rule}`);
}

// legal actions and a hint for the seat to act, from its own view
const first = (await call("GetView", { game_id: gameId, token })).view;
const legal = await call("GetLegalActions", { game_id: gameId, token });
check(legal.version === first.version, "GetLegalActions answers for the current version");
check(JSON.stringify(legal.actions) === JSON.stringify(first.actions),
      "GetLegalActions lists the view's actions");
if (!first.actions.includes("ACTION_MELD")) {
  check(legal.meld === "MELD_AVAILABILITY_NOT_NOW", `no meld now: ${legal.meld}`);
}
if (first.actions.length > 0) {  // the seat is to act: the solver's recommended command
  const hint = await call("GetHint", { game_id: gameId, token });
  check(first.actions.includes(hint.action), `the hint is an allowed action: ${hint.action}`);
  check(hint.version === first.version && hint.reason.length > 0, "the hint says why");
}

// play the human seat with the default moves until the game is over
let view;
for (let n = 0; n < 20000; n += 1) {
  view = (await call("GetView", { game_id: gameId, token })).view;
  check(view.phase !== "PHASE_UNSPECIFIED", "every view has a phase");
  if (view.phase === "PHASE_GAME_OVER") break;
  const acts = view.actions;
  const opts = { expected_version: view.version, request_id: `node-${view.version}` };
  const req = { game_id: gameId, token, options: opts };
  const method = acts.includes("ACTION_DRAW") ? "Draw" : acts.includes("ACTION_PASS") ? "Pass"
    : acts.includes("ACTION_KNOCK") ? "Knock" : "EndTurn";
  if (acts.includes("ACTION_MELD")) {  // meld or pass: ask whether a meld is possible
    const now = await call("GetLegalActions", { game_id: gameId, token });
    check(["MELD_AVAILABILITY_POSSIBLE", "MELD_AVAILABILITY_IMPOSSIBLE",
           "MELD_AVAILABILITY_UNKNOWN"].includes(now.meld), `meld availability: ${now.meld}`);
  }
  const result = (await call(method, req)).result;
  check(BigInt(result.version) > BigInt(view.version), `${method} moved the game on`);
  if (n === 0) {  // a retry with the same request id returns the original result
    const again = (await call(method, req)).result;
    check(again.duplicate && again.version === result.version, "a retry is a duplicate");
  }
}
check(view.phase === "PHASE_GAME_OVER", "the game ended");
const last = BigInt(view.version);

// read the stream, stop after 5 events, resume after the 5th: no gap, no repeat
async function readStream(after, limit) {
  const out = [];
  const stream = stub.StreamEvents({ game_id: gameId, after_version: String(after) });
  for await (const msg of stream) {
    out.push(msg.event);
    if (out.length === limit) { stream.cancel(); break; }
  }
  return out;
}
const head = await readStream(0, 5);
const rest = await readStream(5, 0);
const versions = [...head, ...rest].map((e) => BigInt(e.version));
check(versions.length === Number(last), `the stream holds every event (${versions.length})`);
check(versions.every((v, i) => v === BigInt(i + 1)), "versions 1..N without gaps");
check(rest[rest.length - 1].type === "GameEnded", "the stream ends with GameEnded");
check(head[0].game_started.seed === "4611686018427387903", "the 62-bit seed survives exactly");

// reflection (v1alpha, what the server offers): list the services
const reflection = new pkg.grpc.reflection.v1alpha.ServerReflection(
  address, grpc.credentials.createInsecure());
const names = await new Promise((resolve, reject) => {
  const s = reflection.ServerReflectionInfo();
  s.on("data", (r) => { resolve(r.list_services_response.service.map((x) => x.name)); s.end(); });
  s.on("error", reject);
  s.write({ list_services: "" });
});
check(names.includes("rummy_api.v1.GameService"), "reflection lists GameService");
check(names.includes("grpc.health.v1.Health"), "reflection lists Health");
// a served game's seats change hands (RULES section 13): seat 1 leaves out of turn and a
// server bot plays it; then seat 0 resigns and, every human seat gone, the game ends (R13.5)
const two = await call("CreateGame", {
  seats: [{ kind: "SEAT_KIND_HUMAN", name: "a" }, { kind: "SEAT_KIND_HUMAN", name: "b" }],
  takeover_strategy: "random",
});
const [t0, t1] = [two.tokens[0].token, two.tokens[1].token];
const left = (await call("Leave", { game_id: two.game_id, token: t1 })).result;
check(left.events[0].type === "SeatLeft" && left.events[0].seat_left.reason === "leave",
      "Leave appends SeatLeft");
check(left.events[1].type === "SeatTakenOver"
      && left.events[1].seat_taken_over.strategy === "random", "a server bot takes the seat");
const seen = (await call("GetView", { game_id: two.game_id, token: t0 })).view;
check(seen.controllers[1] === "bot:random" && seen.controllers[0] === "human",
      `every seat sees who plays each seat: ${seen.controllers}`);
const ended = (await call("Resign", { game_id: two.game_id, token: t0 })).result;
const gameEnded = ended.events[ended.events.length - 1];
check(gameEnded.type === "GameEnded" && gameEnded.game_ended.left.length === 2,
      "the game ends when every human seat left (R13.5)");

console.log(`ok ${checks} checks`);
process.exit(0);
