"""A differential driver of the environment: scripted games (random legal actions, illegal
ones, clones, pickles, mutated observations, two environments interleaved) recorded as
one text line per step, so that two implementations of :mod:`rummy_env` can be compared
line for line (``python tests/rl/envdiff.py OUT.json`` under each) or against recorded digests
(tests/rl/test_env_differential.py).

Every line holds what a caller can see: each agent's observation (dtype, shape, writeable
flag, sha256 of the bytes), the global state, the mask, rewards, terminations, infos (the
candidates' tables), the engine state's repr, the commands of the legal meld slots and
their ``Melded`` events, the error of an illegal action.
"""

from __future__ import annotations

import copy
import hashlib
import json
import pickle
import random
import sys
from typing import Any

import numpy as np

from rummy.rules import RuleSet
from rummy_env import manipulation_rummy_v0 as v0


def arr(a: Any, flag: bool = True) -> str:
    """dtype, shape, writeable flag (with ``flag``) and a sha256 prefix of an array's
    bytes."""
    a = np.asarray(a)
    w = ("w" if a.flags.writeable else "r") if flag else ""
    return (f"{a.dtype.str}{a.shape}{w}:"
            f"{hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]}")


def obs_text(o: dict[str, Any]) -> str:
    return ",".join(f"{k}={arr(o[k])}" for k in sorted(o))


def err(fn: Any) -> str:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error is the record
        return f"{type(e).__name__}:{e}"
    return "ok"


def snapshot(env: Any, rng: random.Random, read_infos: bool = True) -> str:
    """One record of everything the caller can read now (the reads in an order drawn
    from ``rng``, so that lazily built parts are asked in different orders)."""
    parts: list[str] = []
    reads = ["obs", "state", "mask", "slots", "misc"]
    rng.shuffle(reads)
    for r in reads:
        if r == "obs":
            for a in env.possible_agents:
                parts.append(f"{a}:{obs_text(env.observe(a))}")
        elif r == "state":
            parts.append("state=" + arr(env.state()))
            parts.append("gs=" + hashlib.sha256(repr(env.state_).encode()).hexdigest()[:16])
        elif r == "mask":
            # bytes and dtype only: a copied environment's mask may be writable (the
            # flag is no part of the comparison; test_env_attack pins it)
            parts.append("mask=" + arr(env.legal_mask(), flag=False))
        elif r == "slots" and env.actions == "slots" and env.agents:
            cands = env.candidates()
            if cands is not None:
                order = list(range(v0.MELD_SLOTS))
                rng.shuffle(order)
                for slot in order:
                    a = v0.N_FIXED + slot
                    try:
                        cmd = repr(env.command_of(a))
                    except ValueError as e:
                        cmd = f"VE:{e}"
                    ev = repr(cands.meld_event(slot)) if rng.random() < 0.7 else "-"
                    parts.append(f"s{slot}:{cmd}|{ev}")
                parts.append(f"legal={cands.legal_slots()}")
        elif r == "misc":
            parts.append(f"sel={env.agent_selection} agents={env.agents}")
            parts.append(f"rew={sorted(env.rewards.items())}")
            parts.append(f"cum={sorted(env._cumulative_rewards.items())}")
            parts.append(f"term={sorted(env.terminations.items())}")
            parts.append(f"trunc={sorted(env.truncations.items())}")
            if read_infos:
                parts.append("infos=" + repr({a: {k: list(v) for k, v in i.items()}
                                              for a, i in sorted(env.infos.items())}))
            else:
                parts.append("infokeys=" + repr({a: sorted(i) for a, i in
                                                 sorted(env.infos.items())}))
            parts.append(f"hist={env.history[-3:]} steps={env._steps}")
    parts.sort()
    return " ".join(parts)


def pick(env: Any, rng: random.Random) -> int | None:
    """A legal action (meld slots preferred), or ``None`` for a done agent."""
    a = env.agent_selection
    if env.terminations[a] or env.truncations[a]:
        return None
    legal = np.flatnonzero(env.legal_mask()).tolist()
    melds = [x for x in legal if x >= v0.N_FIXED] if env.actions == "slots" else []
    if melds and rng.random() < 0.6:
        return rng.choice(melds)
    if env.actions == "edits":
        from rummy_env._edit import FINISH
        if FINISH in legal and rng.random() < 0.5:
            return FINISH
    return rng.choice(legal)


def illegal(env: Any, rng: random.Random) -> Any:
    mask = env.legal_mask()
    bad = [x for x in range(-2, env.n_actions + 2) if not (0 <= x < env.n_actions and mask[x])]
    choice = rng.choice(bad + [None, "x"])
    if isinstance(choice, int) and rng.random() < 0.5:
        return np.int64(choice)
    return choice


def make(cfg: dict[str, Any]) -> Any:
    rules = RuleSet(**cfg.get("rules", {}))
    opp = {int(k): b for k, b in cfg.get("opponents", {}).items()}
    return v0.raw_env(players=cfg["players"], rules=rules, opponents=opp,
                      auto_forced=cfg.get("auto_forced", False),
                      normalize=cfg.get("normalize", False), history=cfg.get("history", 0),
                      actions=cfg.get("actions", "slots"), max_steps=cfg.get("max_steps", 400))


def play(cfg: dict[str, Any], out: list[str], games: int = 2) -> None:
    """Play ``games`` games of ``cfg`` on one environment object (reset reused), with
    the adversarial operations, appending one line per step to ``out``."""
    env = make(cfg)
    rng = random.Random(cfg["seed"] * 7919 + 1)
    for g in range(games):
        env.reset(seed=cfg["seed"] + g if g == 0 or rng.random() < 0.5 else None)
        out.append(f"reset {env.game_seed} " + snapshot(env, rng))
        n = 0
        while env.agents and n < cfg.get("max_actions", 250):
            n += 1
            roll = rng.random()
            if roll < 0.08 and env.agents:
                bad = illegal(env, rng)
                out.append(f"illegal {bad!r}: " + err(lambda bad=bad: env.step(bad)))
            elif roll < 0.12:
                # mutate what the caller got, then read again
                o = env.observe(env.agent_selection)
                for k in o:
                    if o[k].flags.writeable:
                        o[k][:] = 3
                m = env.legal_mask()
                out.append("mutmask " + err(lambda m=m: m.__setitem__(0, 1)))
            elif roll < 0.16:
                # a copy stepped on its own must leave the original as it was, and the
                # original stepped alike must read the same as the copy
                how = rng.choice(["clone", "deepcopy", "pickle"])
                other = (env.clone() if how == "clone" else copy.deepcopy(env)
                         if how == "deepcopy" else pickle.loads(pickle.dumps(env)))
                before = snapshot(env, random.Random(1))
                seq_rng = random.Random(rng.random())
                lines_c = []
                acts = []
                for _ in range(rng.randint(1, 6)):
                    if not other.agents:
                        break
                    a = pick(other, seq_rng)
                    acts.append(a)
                    other.step(a)
                    lines_c.append(snapshot(other, random.Random(2)))
                after = snapshot(env, random.Random(1))
                out.append(f"{how} unchanged={before == after} copy=" +
                           hashlib.sha256("".join(lines_c).encode()).hexdigest()[:16])
                # poke the copy's mask (a read-only array, maybe writable after a copy)
                mk = other.legal_mask()
                res = err(lambda mk=mk: setattr(mk.flags, "writeable", True))
                if res == "ok" and mk.size:
                    mk[:] = 1
                    last = (v0.N_FIXED + v0.MELD_SLOTS - 1 if other.actions == "slots"
                            else other.n_actions - 1)
                    res += " then " + err(lambda o=other, x=last: o.step(x))
                out.append("copymask " + res)
                if rng.random() < 0.5:
                    lines_o = []
                    for a in acts:
                        env.step(a)
                        lines_o.append(snapshot(env, random.Random(2)))
                    out.append(f"replay same={lines_o == lines_c}")
                    out.append(snapshot(env, rng))
                    continue
            if not env.agents:
                break
            a = pick(env, rng)
            res = err(lambda a=a: env.step(a))
            out.append(f"step {a} {res} " + snapshot(env, rng, read_infos=rng.random() < 0.5))
        if env.agents:
            out.append("dead " + err(lambda: env.step(0)))
        # the done agents stepped out with None
        while env.agents:
            a = env.agent_selection
            if env.terminations[a] or env.truncations[a]:
                out.append("none " + err(lambda: env.step(None)))
            else:
                break


def interleaved(cfg_a: dict[str, Any], cfg_b: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Two environments stepped in turn, each game's lines apart."""
    ea, eb = make(cfg_a), make(cfg_b)
    ra, rb = random.Random(cfg_a["seed"]), random.Random(cfg_b["seed"])
    ea.reset(seed=cfg_a["seed"])
    eb.reset(seed=cfg_b["seed"])
    la, lb = [snapshot(ea, ra)], [snapshot(eb, rb)]
    while ea.agents or eb.agents:
        for e, r, lines in ((ea, ra, la), (eb, rb, lb)):
            if e.agents and len(lines) < 150:
                e.step(pick(e, r))
                lines.append(snapshot(e, r))
            elif e.agents:
                e.agents = []
    return la, lb


def alone(cfg: dict[str, Any]) -> list[str]:
    e = make(cfg)
    r = random.Random(cfg["seed"])
    e.reset(seed=cfg["seed"])
    lines = [snapshot(e, r)]
    while e.agents and len(lines) < 150:
        e.step(pick(e, r))
        lines.append(snapshot(e, r))
    return lines


def single(cfg: dict[str, Any]) -> list[str]:
    """The single-agent wrapper over a game."""
    from rummy_env.single_agent import single_agent
    opp = {int(k): b for k, b in cfg["opponents"].items()}
    env = single_agent(seat=cfg["seat"], opponents=opp, rules=RuleSet(**cfg.get("rules", {})),
                       actions=cfg.get("actions", "slots"), max_steps=400)
    rng = random.Random(cfg["seed"])
    obs, info = env.reset(seed=cfg["seed"])
    lines = [arr(obs) + arr(info["action_mask"])]
    for _ in range(120):
        legal = np.flatnonzero(env.action_masks()).tolist()
        a = rng.choice(legal) if rng.random() < 0.9 else rng.randrange(env.action_space.n)
        try:
            obs, rew, term, trunc, info = env.step(a)
        except Exception as e:  # noqa: BLE001
            lines.append(f"{type(e).__name__}:{e}")
            break
        shown = {k: arr(v) if isinstance(v, np.ndarray) else v for k, v in info.items()}
        lines.append(f"{a} {arr(obs)} {rew!r} {term} {trunc} {shown}")
        if term or trunc:
            break
    return lines


VARIANTS: list[dict[str, Any]] = [
    {},
    {"joker_moves": "locked"},
    {"joker_release": "hand"},
    {"ace_high": False},
    {"opening_meld_per_player": True},
    {"opening_meld_min_points": 30},
    {"opening_meld_per_player": True, "opening_meld_min_points": 20},
    {"knock_timing": "start"},
    {"hand_size": 14, "knock_threshold": 20, "max_draws_per_turn": 1},
    {"target_score": 40, "hand_size": 6},
]


def configs(n: int, base: int = 0) -> list[dict[str, Any]]:
    """``n`` configurations drawn from a fixed generator (seed ``base``)."""
    r = random.Random(base)
    out = []
    for i in range(n):
        players = r.choice([2, 3, 4, 5])
        rules = r.choice(VARIANTS) if r.random() < 0.6 else {}
        if rules.get("hand_size", 10) * players > 60:
            rules = {}
        cfg: dict[str, Any] = {
            "seed": base * 1000 + i, "players": players, "rules": rules,
            "actions": "edits" if r.random() < 0.2 else "slots",
            "auto_forced": r.random() < 0.4, "normalize": r.random() < 0.3,
            "history": r.choice([0, 0, 3]),
        }
        if r.random() < 0.4:
            seats = r.sample(range(players), r.randint(1, players - 1))
            cfg["opponents"] = {str(s): r.choice(["basic", "greedy", "random"]) for s in seats}
        out.append(cfg)
    return out


def run_all(n: int, base: int = 0, games: int = 2) -> dict[str, list[str]]:
    """Every line of ``n`` configurations, the interleaved pairs and the single-agent
    games, by name."""
    res: dict[str, list[str]] = {}
    cfgs = configs(n, base)
    for i, cfg in enumerate(cfgs):
        lines: list[str] = [json.dumps(cfg, sort_keys=True)]
        play(cfg, lines, games)
        res[f"cfg{i}"] = lines
    for i in range(0, min(n, 6) - 1, 2):
        a, b = cfgs[i], cfgs[i + 1]
        a = {**a, "opponents": {}}
        b = {**b, "opponents": {}}
        la, lb = interleaved(a, b)
        res[f"inter{i}"] = la + lb + [f"same_alone={alone(a) == la and alone(b) == lb}"]
    for i in range(min(n, 3)):
        cfg = {"seed": base + i, "seat": i % 2, "opponents": {str(1 - i % 2): "greedy"},
               "actions": "edits" if i == 2 else "slots"}
        res[f"single{i}"] = single(cfg)
    return res


def states(games: int, seed: int) -> list[Any]:
    """``meld_or_pass`` states of random games (auto-forced, meld slots preferred) and,
    for each, two with the seat's hand replaced by random cards (jokers, pairs)."""
    from rummy.cards import JOKER
    from rummy.state import MELD_OR_PASS
    out = []
    r = random.Random(seed)
    for _ in range(games):
        players = r.choice([2, 3, 4, 5])
        rules = RuleSet(**(r.choice(VARIANTS) if r.random() < 0.5 else {}))
        if rules.hand_size * players > 60:
            rules = RuleSet()
        env = v0.raw_env(players=players, rules=rules, auto_forced=True, max_steps=600)
        env.reset(seed=r.randrange(10**9))
        while env.agents:
            a = env.agent_selection
            if env.terminations[a] or env.truncations[a]:
                env.step(None)
                continue
            s = env.state_
            if s.phase == MELD_OR_PASS:
                out.append(s)
                decks = 1 if players == 2 else 2
                pool = list(range(52)) * decks + [JOKER] * decks
                for _ in range(2):
                    hands = list(s.hands)
                    hands[s.turn] = tuple(sorted(r.sample(pool, r.randint(1, 16))))
                    out.append(s._replace(hands=tuple(hands)))
            env.step(pick(env, r))
    return out


def candidate_lines(games: int, seed: int) -> list[str]:
    """Every meld slot's table and ``Melded`` event, the legal slots and the cheap list
    of :class:`rummy_env._candidates.Candidates` over :func:`states`, one line a state
    (slots read in different orders, events before or after tables)."""
    from rummy_env._candidates import Candidates
    lines = []
    for i, s in enumerate(states(games, seed)):
        parts = []
        order = list(range(v0.MELD_SLOTS))
        if i % 2:
            order.reverse()
        c = Candidates(s, v0.MELD_SLOTS)
        for slot in order:
            if i % 3 == 0:
                parts.append(("e", slot, repr(c.meld_event(slot))))
                parts.append(("t", slot, repr(c.table(slot))))
            else:
                parts.append(("t", slot, repr(c.table(slot))))
                parts.append(("e", slot, repr(c.meld_event(slot))))
        parts.append(("legal", repr(c.legal_slots()), repr(c.has_play)))
        parts.append(("cheap", repr(c.cheap)))
        for slot in range(v0.MELD_SLOTS):
            t = c.table(slot)
            if t is not None:
                parts.append(("slot_of", slot, repr(c.slot_of(t))))
        fresh = Candidates(s, v0.MELD_SLOTS)
        parts.append(("fresh", repr([fresh.meld_event(k) for k in range(15, -1, -1)])))
        parts.sort()
        lines.append(repr(parts))
    return lines


def solver_lines(games: int, seed: int) -> list[str]:
    """:func:`rummy.solver.solve` and ``best_play`` with node limits (small ones stop the
    search) on the tables and hands of :func:`states`, tuples and lists."""
    from rummy.solver import best_play, solve
    lines = []
    for i, s in enumerate(states(games, seed)[::3]):
        t, h = s.table, s.hands[s.turn]
        for lim in (1, 7, 60, 500, 40_000, True, 0, 2**70):
            for obj in ("points", "cards"):
                for kind in ("tuple", "list"):
                    tt = t if kind == "tuple" else [list(m) for m in t]
                    hh = h if kind == "tuple" else list(h)
                    got = []
                    for fn in (solve, best_play):
                        try:
                            got.append(repr(fn(tt, hh, objective=obj, node_limit=lim)))
                        except Exception as e:  # noqa: BLE001 - the error is the record
                            got.append(f"{type(e).__name__}:{e}")
                    lines.append(f"{i} {lim} {obj} {kind} {got}")
    return lines


def lines_of(key: str) -> list[str]:
    """The lines of one entry of :func:`run_all` (``"play{base}:cfg{i}"``,
    ``"play{base}:inter{i}"``, ``"play{base}:single{i}"``) or of
    ``"cands:{games}:{seed}"`` (:func:`candidate_lines`), ``"solver:{games}:{seed}"``
    (:func:`solver_lines`)."""
    head, name = key.split(":", 1)
    if head == "cands":
        games, seed = map(int, name.split(":"))
        return candidate_lines(games, seed)
    if head == "solver":
        games, seed = map(int, name.split(":"))
        return solver_lines(games, seed)
    base = int(head[len("play"):])
    if name.startswith("cfg"):
        i = int(name[3:])
        cfg = configs(i + 1, base)[i]
        lines = [json.dumps(cfg, sort_keys=True)]
        play(cfg, lines)
        return lines
    if name.startswith("inter"):
        i = int(name[5:])
        a, b = configs(i + 2, base)[i:i + 2]
        a = {**a, "opponents": {}}
        b = {**b, "opponents": {}}
        la, lb = interleaved(a, b)
        return la + lb + [f"same_alone={alone(a) == la and alone(b) == lb}"]
    i = int(name[len("single"):])
    return single({"seed": base + i, "seat": i % 2, "opponents": {str(1 - i % 2): "greedy"},
                   "actions": "edits" if i == 2 else "slots"})


def digest(lines: list[str]) -> str:
    """sha256 of the lines (the mask-mutation probe's left out: test_env_attack)."""
    h = hashlib.sha256()
    for line in lines:
        if not line.startswith("copymask"):
            h.update(line.encode())
            h.update(b"\n")
    return h.hexdigest()


if __name__ == "__main__":
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    base = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    with open(sys.argv[1], "w") as f:
        json.dump(run_all(n, base), f)
