"""Every command shown in README.md and README.md (the five-minute tour the README
absorbs) is exercised here.

``COMMANDS`` lists each command of the documents with how it is exercised; a test extracts
the commands from the documents (lines of ``sh`` code blocks without their trailing
comments, and inline code spans starting with a program name) and fails if the two lists
differ, so the documents cannot drift from the tests. The documents' Python blocks run too:
the gRPC client against the live service, the others as they are.

How a command is exercised (``kind``):

* ``run``: executed as written by ``bash`` in a scratch directory (``tests/`` and ``deploy/``
  linked in, the virtual environment on ``PATH``), in the order of the documents; must exit
  0 (``rummy play`` gets scripted input and quits). A command whose subcommand or bots are
  not registered yet (``rummy solve``, ``--bots greedy``) is reported as a warning.
* ``make``: a Makefile target, dry-run with ``make -n`` (the targets themselves are what CI
  runs).
* ``live``: executed against a real ``rummy serve`` over the real Redis (skipped, with the
  reason, when Redis does not answer). The only substitutions: the Redis URL and a key prefix
  unique to the test, free ports for 50051/9100, ``GAME_ID`` the game the tour's client
  played, ``python`` the test's interpreter.
* ``parse``: the adapters' long-running commands (a Celery worker, batches that need
  workers): parsed by ``rummy``'s own argument parser, so unknown options or bad values fail,
  and ``--help`` runs. Skipped while the subcommand is not registered.
* ``help``: a bare mention of a subcommand (or ``rummy a / b / c``) in the text:
  ``rummy <sub> --help`` runs for each.
* ``static``: needs a container engine or a cluster (none here): the files it uses are
  checked by ``test_compose.py`` / ``test_k8s.py``; here only that they exist.
* ``tool``: needs an external client (``grpcurl``): run against the live server when the
  tool is installed, else skipped.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import DEPLOY, REPO

TOUR = REPO / "docs" / "tour.md"

COMMANDS: dict[str, str] = {
    # README.md
    "make demo": "make",
    "make test": "make",
    "make test-fast": "make",
    "make test-slow": "make",
    "make chaos": "make",
    "make lint": "make",
    "make bench": "make",
    "make audit": "make",
    "make secrets": "make",
    "make deploy-test": "make",
    "rummy simulate --games 200 --players 4 --seed 7": "run",
    "rummy simulate --games 2000 --players 4 --bots strategic,greedy,basic,random --jobs 2":
        "parse",
    "rummy simulate --games 2000 --players 4 --bots strategic,greedy,basic,random --seed 2026 "
    "--jobs 2": "parse",
    "rummy simulate --games 10 --players 3 --seed 1 --events-dir out/": "run",
    "rummy replay out/game-000003.jsonl --step": "run",
    "rummy replay out/game-000003.jsonl --at 40": "run",
    "rummy conformance tests/conformance/cases/*.jsonl": "run",
    # a no-op when make setup has built the compiled modules for these sources
    "python -m rummy.accel build": "run",
    "python -m rummy.accel status": "run",
    'rummy solve --table "5S 6S *7S" --hand "7S KD QD" --explain': "run",
    "rummy play --players 3 --bots basic,greedy": "run",
    # docs/security.md, docs/api.md: erasure
    "rummy erase GAME_ID": "parse",
    "rummy replay": "help",
    ("rummy simulate / sweep / replay / record / tournament / conformance / solve / play / "
     "serve / export / worker / batch"): "help",
    # README.md
    # 1. play in the terminal
    "rummy play --players 3 --bots basic,random --seed 7": "run",
    # 2. the service
    "docker compose -f deploy/compose.yaml up -d --build": "static",
    "rummy serve --redis-url redis://localhost:6379/0 --port 50051 --metrics-port 9100": "live",
    # 3. the gRPC client
    "python client.py": "live",
    "grpcurl -plaintext localhost:50051 list": "tool",
    "grpcurl -plaintext localhost:50051 describe rummy_api.v1.GameService": "tool",
    # 4. replays
    "rummy export GAME_ID --redis-url redis://localhost:6379/0 -o game.jsonl": "live",
    "rummy replay game.jsonl": "live",
    "rummy replay game.jsonl --at 20": "live",
    "rummy replay GAME_ID --redis-url redis://localhost:6379/0": "live",
    "rummy replay game.jsonl --html game.html": "live",
    "rummy replay game.jsonl --html seat1.html --seat 1": "live",
    "rummy replay game.jsonl --analyse": "live",
    "rummy replay game.jsonl --analyse --json analysis.json --html game.html": "live",
    "rummy replay game.jsonl --fork 120": "parse",
    "rummy puzzles out/*.jsonl --cases p.jsonl --html p.html": "parse",
    "rummy play": "help",
    "rummy batch ab": "help",
    "rummy bot check": "help",
    "rummy sweep --rules joker_moves=free,locked --games 400 --seed 7 --html joker.html": "parse",
    "rummy batch status": "help",
    # 5. batches
    "rummy simulate --games 50 --players 4 --bots basic,random --seed 7": "run",
    "rummy simulate --replay-game 3 --games 50 --players 4 --bots basic,random --seed 7 "
    "--events-dir out/": "run",
    "rummy replay out/game-000003.jsonl": "run",
    "rummy conformance tests/conformance/cases/melds.jsonl": "run",
    "rummy worker -c 2 --metrics-port 9101": "parse",
    "rummy batch submit --games 2000 --players 4 --bots basic,random --seed 7": "parse",
    "rummy batch status BATCH_ID --wait": "parse",
    "rummy batch report BATCH_ID --html report.html": "parse",
    "rummy batch report BATCH_ID": "parse",
    "rummy batch report": "help",
    "rummy sweep --rules knock_threshold=0,5,15 --games 40 --players 2 --bots greedy,basic "
    "--seed 7": "run",
    "rummy batch submit": "help",
    "rummy batch sweep --rules knock_threshold=0,5,15 --games 4000 --players 4 --seed 7 "
    "--html sweep.html": "parse",
    "rummy sweep": "help",
    "rummy batch sweep": "help",
    # tuning the rules, restricted play
    "rummy tune --space 'knock_threshold=0..20,hand_size=7..13,joker_moves=free|locked' "
    "--objective 'seat_fairness_p>=0.05; rounds_per_game in [4,6]; minimise stock_rounds; "
    "maximise decision_share' --games 30 --final-games 120 --budget-games 1500 --seed 7 "
    "--json tune.json --html tune.html": "parse",
    "rummy batch tune --space 'knock_threshold=0..20,hand_size=7..13' --objective "
    "'rounds_per_game in [6,9]; minimise stock_rounds' --budget-seconds 3600 "
    "--html tune.html": "parse",
    "rummy batch restrict greedy --restrictions no-rearrange,no-joker-free,knock-at-0 "
    "--players 2 --games 200 --seed 7 --local": "parse",
    "rummy tune": "help",
    "rummy tune --help": "help",
    "rummy batch tune": "help",
    "rummy record export out/game-000003.jsonl -o game3.txt": "run",
    "rummy record import game3.txt -o game3.jsonl": "run",
    "rummy serve --redis-url 'redis+cluster://10.0.0.1:7000,10.0.0.2:7000'": "parse",
    "python -m tests.solver.fuzz_edges": "fuzz",
    # 6. metrics
    "curl -s localhost:9100/metrics | grep '^rummy_commands_total'": "live",
    "curl -s localhost:9101/metrics | grep '^rummy_sim_games_total'": "parse",
    # inline mentions in the text
    "rummy simulate": "help",
    "rummy serve": "help",
    "rummy export": "help",
    "rummy verify": "help",
    "rummy serve --help": "run",
    "rummy serve --read-feed": "parse",
    "rummy serve --hints off": "parse",
    "rummy serve --redis-url redis://localhost:6379/0 --processes 2": "parse",
    # running with TLS
    "rummy serve --new-api-key backend-a": "parse",
    "rummy serve --redis-url redis://localhost:6379/0 --tls-cert server.pem --tls-key "
    "server.key --tls-client-ca clients-ca.pem --allow-client-cn backend-a --api-keys "
    "api-keys.txt --admin-token-file admin-token.txt": "parse",
    "rummy batch": "help",
    "rummy worker": "help",
    "docker compose -f deploy/compose.yaml up -d --scale worker=4": "static",
    "kubectl apply -k deploy/k8s/overlays/dev": "static",
    "kubectl kustomize deploy/k8s/overlays/dev": "run",
}

#: the worker's metrics endpoint needs a running Celery worker; its command is parsed here
#: and the endpoint itself is tested by the worker tests (tests/workers).
_WORKER_METRICS = "rummy worker -c 2 --metrics-port 9101"

REDIS_URL = os.environ.get("RUMMY_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


# --------------------------------------------------------------------------- the document

def documents() -> list[Path]:
    """The documents whose commands must be exercised (those that exist)."""
    return [p for p in (REPO / "README.md", TOUR) if p.is_file()]


def doc_commands() -> list[str]:
    """Commands of the documents, in order: lines of ``sh`` blocks (trailing comments
    removed), then inline code spans that start with a program name (whitespace
    normalised, duplicates dropped)."""
    found: list[str] = []
    for doc in documents():
        text = doc.read_text(encoding="utf-8")
        for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL):
            for line in block.splitlines():
                line = re.sub(r"\s+#\s.*$", "", line).strip()
                if line and not line.startswith("#"):
                    found.append(line)
        prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
        found += [" ".join(c.split()) for c in re.findall(
            r"`((?:rummy|docker|kubectl|curl|grpcurl|python|make) [^`]*)`", prose)]
    return list(dict.fromkeys(found))


def python_blocks() -> list[str]:
    """Every ``python`` code block of the documents."""
    return [b for doc in documents()
            for b in re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"),
                                re.DOTALL)]


def python_client() -> str:
    """The gRPC client of the tour (the block that makes a ``GameServiceStub``)."""
    clients = [b for b in python_blocks() if "GameServiceStub" in b]
    assert clients, "no gRPC client in the documents"
    return clients[0]


def _section(heading: str) -> str:
    """The text of the first document section whose heading starts with ``heading``."""
    for doc in documents():
        text = doc.read_text(encoding="utf-8")
        m = re.search(rf"^#+ {re.escape(heading)}.*?$", text, re.MULTILINE)
        if m:
            rest = text[m.end():]
            nxt = re.search(r"^#{1,2} ", rest, re.MULTILINE)
            return rest[:nxt.start()] if nxt else rest
    raise AssertionError(f"no section {heading!r} in {[d.name for d in documents()]}")


def test_every_documented_command_is_exercised_here() -> None:
    shown = doc_commands()
    assert shown
    new = sorted(set(shown) - set(COMMANDS))
    assert new == [], ("commands in the documents that this test does not exercise: add "
                       f"each to COMMANDS (tests/deploy/test_readme_commands.py): {new}")
    assert sorted(set(COMMANDS) - set(shown)) == [], "COMMANDS no longer in the documents"


def test_every_environment_variable_read_by_the_code_is_documented() -> None:
    code = ""
    for root in ("rummy", "services", "workers", "deploy"):
        for path in (REPO / root).rglob("*.py"):
            if "rummy_api" not in path.parts:
                code += path.read_text(encoding="utf-8")
    read = set(re.findall(
        r"(?:environ\.get|getenv|environ\[|_env)\(?\s*[\"']([A-Z][A-Z0-9_]+)[\"']", code))
    # variables named by module constants (rummy_store.urls: REDIS_PASSWORD_FILE = "...")
    read |= set(re.findall(r"^[A-Z_]+ = [\"'](RUMMY_[A-Z0-9_]+)[\"']$", code, re.MULTILINE))
    tour = "".join(d.read_text(encoding="utf-8") for d in documents())
    config = _section("Configuration")
    table = set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)`", config, re.MULTILINE))
    table |= set(re.findall(r"^\| `[A-Z0-9_]+` / `([A-Z][A-Z0-9_]+)`", config, re.MULTILINE))
    documented = table | {v for v in read if f"`{v}`" in tour}
    assert read, "no environment variables found in the code"
    assert sorted(read - documented) == [], "read by the code, not documented"
    assert sorted(table - read) == [], "in the configuration table, read by no code"


# --------------------------------------------------------------------------- helpers

def _rummy_argv(command: str) -> list[str]:
    argv = shlex.split(command)
    assert argv[0] == "rummy"
    return argv[1:]


def _run(argv: list[str], cwd: Path, *, stdin: str = "", env: dict[str, str] | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``rummy ...`` (through this interpreter) or another program."""
    if argv[0] == "rummy":
        argv = [sys.executable, "-m", "rummy", *argv[1:]]
    elif argv[0] == "python":
        argv = [sys.executable, *argv[1:]]
    return subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, text=True,
                          timeout=timeout, check=False, env={**os.environ, **(env or {}),
                                                             "COLUMNS": "120"})


def _subcommands() -> set[str]:
    from rummy_cli.main import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return set(sub.choices)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch directory with ``tests/`` and ``deploy/`` of the repository linked in."""
    ws = tmp_path_factory.mktemp("tour")
    for name in ("tests", "deploy"):
        (ws / name).symlink_to(REPO / name)
    return ws


# --------------------------------------------------------------------------- kinds

def _not_available(argv: list[str]) -> str | None:
    """Why a documented ``rummy`` command cannot run yet, or ``None``."""
    if argv[0] != "rummy":
        return None
    if argv[1] not in _subcommands():
        return f"`rummy {argv[1]}` is not registered yet"
    from rummy.bots import BOTS
    if "--bots" in argv:
        unknown = [b for b in argv[argv.index("--bots") + 1].split(",") if b not in BOTS]
        if unknown:
            return f"bots {unknown} are not registered yet"
    return None


def test_local_commands_run_in_document_order(workspace: Path) -> None:
    env = {"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    ran = 0
    for command in doc_commands():
        if COMMANDS.get(command) != "run":
            continue
        argv = shlex.split(command)
        if argv[0] == "kubectl" and shutil.which("kubectl") is None:
            continue  # rendered by test_k8s.py when kubectl is installed
        reason = _not_available(argv)
        if reason:
            warnings.warn(f"not exercised: {command!r}: {reason}", stacklevel=1)
            continue
        stdin = "d\nq\n" if argv[:2] == ["rummy", "play"] else ""
        out = _run(["bash", "-c", command], workspace, stdin=stdin, env=env)
        ran += 1
        if argv[:2] == ["rummy", "play"]:
            assert out.returncode == 0, out.stderr  # the scripted player quits (q exits 0)
            assert "Your hand" in out.stdout and "You draw" in out.stdout
            continue
        assert out.returncode == 0, f"{command}\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
        if argv[:2] == ["rummy", "conformance"]:
            assert " 0 failed" in out.stdout
    assert ran >= 8


@pytest.mark.parametrize("block", [b for b in python_blocks() if "GameServiceStub" not in b],
                         ids=lambda b: b.splitlines()[0][:40])
def test_python_blocks_run(block: str, workspace: Path) -> None:
    out = _run(["python", "-c", block], workspace, timeout=120)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("command", [c for c, k in COMMANDS.items() if k == "make"])
def test_make_targets_exist(command: str) -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    target = shlex.split(command)[1]
    out = subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("command", [c for c, k in COMMANDS.items() if k == "parse"])
def test_adapter_commands_parse(command: str, workspace: Path) -> None:
    if command.startswith("curl") and ":9101/" in command:
        command = _WORKER_METRICS  # the endpoint that curl reads is the worker's
    argv = _rummy_argv(command)
    if argv[0] not in _subcommands():
        pytest.skip(f"`rummy {argv[0]}` is not registered (its extra is not installed)")
    from rummy_cli.main import build_parser
    args = build_parser().parse_args(argv)  # SystemExit on an unknown option or bad value
    assert callable(getattr(args, "func", None))
    words = [w for w in argv if not w.startswith("-")][:2]
    words = [w for w in words if w.isidentifier()]
    helped = _run(["rummy", *words, "--help"], workspace)
    assert helped.returncode == 0, helped.stderr


@pytest.mark.parametrize("command", [c for c, k in COMMANDS.items() if k == "help"])
def test_mentioned_subcommands_have_help(command: str, workspace: Path) -> None:
    names = [w for w in _rummy_argv(command) if w != "/"]
    missing = [n for n in names if n not in _subcommands()]
    if missing:
        warnings.warn(f"not registered yet: {missing}", stacklevel=1)
    present = [n for n in names if n not in missing]
    if not present:
        pytest.skip(f"{missing} not registered")
    for name in present:
        out = _run(["rummy", name, "--help"], workspace)
        assert out.returncode == 0 and "usage: rummy" in out.stdout, name


@pytest.mark.parametrize("command", [c for c, k in COMMANDS.items() if k == "static"])
def test_static_commands_reference_existing_files(command: str) -> None:
    argv = shlex.split(command)
    if "-f" in argv:
        assert (REPO / argv[argv.index("-f") + 1]).is_file()
    if "-k" in argv:
        assert (REPO / argv[argv.index("-k") + 1] / "kustomization.yaml").is_file()
    if "--scale" in argv:
        from .conftest import load_yaml
        service = argv[argv.index("--scale") + 1].split("=")[0]
        assert service in load_yaml(DEPLOY / "compose.yaml")["services"]


# --------------------------------------------------------------------------- live service

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _redis_unreachable() -> str | None:
    try:
        import redis
    except ImportError:
        return "redis-py is not installed"
    try:
        client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
        client.ping()
        client.close()
    except redis.RedisError as exc:
        return f"Redis at {REDIS_URL} is unreachable: {exc}"
    return None


class Live:
    """The tour's service, started as the tour starts it, with its substitutions."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.prefix = f"rummy-tour-{uuid.uuid4().hex[:10]}"
        self.port = _free_port()
        self.metrics_port = _free_port()
        self.game_id = ""
        self.proc: subprocess.Popen[str] | None = None

    def substitute(self, command: str) -> list[str]:
        """The tour command with the test's Redis, prefix, ports and game id."""
        uses_store = "redis://localhost:6379/0" in command
        command = (command.replace("redis://localhost:6379/0", REDIS_URL)
                   .replace("50051", str(self.port)).replace("9100", str(self.metrics_port))
                   .replace("GAME_ID", self.game_id))
        argv = shlex.split(command)
        return [*argv, "--prefix", self.prefix] if uses_store else argv

    def start(self, command: str) -> None:
        argv = self.substitute(command)
        argv = [sys.executable, "-m", "rummy", *argv[1:]]
        self.proc = subprocess.Popen(argv, cwd=self.workspace, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        sys.path.insert(0, str(DEPLOY))
        try:
            from healthcheck import check_grpc  # deploy/healthcheck.py
        finally:
            sys.path.remove(str(DEPLOY))
        deadline = time.monotonic() + 60
        while check_grpc(f"127.0.0.1:{self.port}", timeout=1) is not None:
            assert self.proc.poll() is None, self.proc.stdout.read()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "rummy serve did not become healthy"
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def cleanup_redis(self) -> None:
        import redis
        client = redis.Redis.from_url(REDIS_URL)
        keys = list(client.scan_iter(match=f"{self.prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()


@pytest.fixture(scope="module")
def live(workspace: Path) -> Iterator[Live]:
    """``rummy serve`` started with the tour's command, over the real Redis."""
    reason = _redis_unreachable()
    if reason:
        pytest.skip(reason)
    pytest.importorskip("rummy_grpc")
    serve = next(c for c in COMMANDS if c.startswith("rummy serve --redis-url"))
    server = Live(workspace)
    try:
        server.start(serve)
        yield server
    finally:
        server.stop()
        server.cleanup_redis()


@pytest.mark.needs_redis
def test_live_tour(live: Live) -> None:
    """Sections 3, 4 and 6 in order: the client plays a game, the game is exported and
    replayed, and the service's metrics show the commands."""
    ws = live.workspace
    (ws / "client.py").write_text(python_client(), encoding="utf-8")
    out = _run(live.substitute("python client.py"), ws,
               env={"RUMMY_ADDR": f"localhost:{live.port}"}, timeout=300)
    assert out.returncode == 0, out.stderr
    live.game_id = re.search(r"^game (\S+)$", out.stdout, re.MULTILINE).group(1)  # type: ignore[union-attr]
    assert "refused: FAILED_PRECONDITION R5." in out.stdout
    assert re.search(r"^final \[\d+, \d+\] winners \[", out.stdout, re.MULTILINE)
    for command in doc_commands():
        if COMMANDS.get(command) != "live" or command.startswith(("rummy serve", "python")):
            continue
        if command.startswith("curl"):
            if shutil.which("curl") is None:
                continue
            shell = " ".join(shlex.quote(a) if a != "|" else a
                             for a in live.substitute(command))
            res = subprocess.run(["bash", "-c", shell], capture_output=True, text=True,
                                 timeout=60, check=False)
            assert res.returncode == 0 and 'command="draw",outcome="ok"' in res.stdout, res
            continue
        res = _run(live.substitute(command), ws)
        assert res.returncode == 0, f"{command}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
        if command.startswith("rummy export"):
            assert (ws / "game.jsonl").stat().st_size > 0


@pytest.mark.needs_redis
@pytest.mark.parametrize("command", [c for c, k in COMMANDS.items() if k == "tool"])
def test_grpcurl_against_the_live_service(command: str, live: Live) -> None:
    if shutil.which("grpcurl") is None:
        pytest.skip("grpcurl is not installed")
    res = subprocess.run(live.substitute(command), capture_output=True, text=True,
                         timeout=60, check=False)
    assert res.returncode == 0, res.stderr
    assert "rummy_api.v1.GameService" in res.stdout


def test_every_rpc_and_status_of_the_proto_is_in_the_api_reference() -> None:
    proto = (REPO / "proto" / "rummy_api" / "v1" / "game_service.proto").read_text(
        encoding="utf-8")
    rpcs = re.findall(r"^\s*rpc (\w+)\(", proto, re.MULTILINE)
    statuses = re.findall(r"^//\s+([A-Z_]{6,})\s", proto, re.MULTILINE)
    assert rpcs and statuses
    reference = _section("The gRPC API")
    assert [r for r in rpcs if f"`{r}`" not in reference] == []
    assert [s for s in statuses if f"`{s}`" not in reference] == []


@pytest.mark.parametrize("command", [c for c, k in COMMANDS.items() if k == "fuzz"])
def test_fuzz_command_runs_a_short_fuzz(command: str) -> None:
    """The solver fuzz of the README (CI runs 20,000 positions; here 14, one process)."""
    pytest.importorskip("highspy")
    args = command.split()[1:] + ["--positions", "14", "--jobs", "1"]
    out = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1].startswith("14 positions, 0 crashes, 0 wrong")
