// The boardgame.io side of benchmarks/bench_peer.py: the same turn loop the Python clients
// play on `rummy serve` (each phase's default move, rummy.decide.DEFAULT_KIND): draw, pass,
// draw, pass, draw; the third draw ends the turn (R3.3). Two decks with jokers (106 cards),
// 14 dealt to each seat; when the stock runs out the cards are dealt again (a new round).
// Hands and the stock are hidden: playerView gives a seat its own hand and the others' sizes
// (the boardgame.io way of keeping I3), and the moves run on the server only (client: false).
const { INVALID_MOVE } = require('boardgame.io/core');

const DECK = 106;
const HAND = 14;
const MAX_DRAWS = 3;
const MOVES_PER_GAME = 627; // one two-seat game of rummy serve, seed 7, default moves

function deal(G, random) {
  const deck = random.Shuffle([...Array(DECK).keys()]);
  G.hands = { 0: deck.slice(0, HAND), 1: deck.slice(HAND, 2 * HAND) };
  G.stock = deck.slice(2 * HAND);
  G.round += 1;
}

function draw({ G, events, random, playerID }) {
  if (G.stage !== 'draw') return INVALID_MOVE;
  G.hands[playerID].push(G.stock.pop());
  G.draws += 1;
  G.moves += 1;
  if (G.stock.length === 0) deal(G, random);
  if (G.draws >= MAX_DRAWS) {
    G.draws = 0;
    G.stage = 'draw';
    events.endTurn();
  } else {
    G.stage = 'meld_or_pass';
  }
}

function pass({ G }) {
  if (G.stage !== 'meld_or_pass') return INVALID_MOVE;
  G.stage = 'draw';
  G.moves += 1;
}

const Rummy = {
  name: 'rummy',
  minPlayers: 2,
  maxPlayers: 2,
  setup: ({ random }) => {
    const G = { hands: {}, stock: [], round: 0, draws: 0, stage: 'draw', moves: 0 };
    deal(G, random);
    return G;
  },
  moves: {
    draw: { move: draw, client: false },
    pass: { move: pass, client: false },
  },
  endIf: ({ G }) => (G.moves >= MOVES_PER_GAME ? { done: true } : undefined),
  playerView: ({ G, playerID }) => ({
    round: G.round,
    draws: G.draws,
    stage: G.stage,
    moves: G.moves,
    hand: playerID != null && G.hands[playerID] ? G.hands[playerID] : [],
    handSizes: [G.hands[0].length, G.hands[1].length],
    stockSize: G.stock.length,
  }),
};

module.exports = { Rummy, MOVES_PER_GAME };
