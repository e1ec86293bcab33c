"""`kcheck explore`: walk a model by hand in a local web page, as Stateright's Explorer does.

The server binds to 127.0.0.1 only and keeps no session: the page holds the path walked (an
initial state and the reprs of the actions taken) and asks for the state at its end. A path is
followed by matching each repr against the actions the model enumerates in that state (never
evaluated), so nothing runs but the model's own actions; a request that names anything else gets
a 4xx with a message. Endpoints (JSON in, JSON out):

- `GET /`: the page;
- `POST /api/state {init, path}`: the state at the end of the path, its enabled actions (repr and
  a short summary of where each leads), and every invariant and witness evaluated on it;
- `POST /api/trace {itf}`: the path of an ITF trace (its steps' actions, followed from its first
  state), to start from its end;
- `POST /api/itf {init, path}`: the path as an ITF document, to download.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from checker.config import ConfigError, RunConfig

PAGE = Path(__file__).with_name("explore_page.html")
MAX_BODY = 8 << 20  # a pasted trace may be large, not unbounded
MAX_PATH = 10_000


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Explorer:
    """The model behind the page: follows paths, describes states. Pure but for its caches."""

    def __init__(self, rc: RunConfig) -> None:
        self.rc = rc
        self.model = rc.build()
        self.inits = list(self.model.init_states())
        self.summary = getattr(self.model, "summary", None) or (lambda s: "")

    def follow(self, init: Any, path: Any) -> list[tuple[Any, Any]]:
        """The trace [(action or None, state), ...] a path walks; BadRequest if a step is not one."""
        if not isinstance(init, int) or isinstance(init, bool) or not 0 <= init < len(self.inits):
            raise BadRequest(400, f"init must be the index of an initial state (0..{len(self.inits) - 1})")
        if not isinstance(path, list) or not all(isinstance(a, str) for a in path):
            raise BadRequest(400, "path must be a list of action reprs (strings)")
        if len(path) > MAX_PATH:
            raise BadRequest(413, f"a path of more than {MAX_PATH:,} steps")
        model = self.model
        s = self.inits[init]
        trace: list[tuple[Any, Any]] = [(None, s)]
        for i, wanted in enumerate(path):
            key = "".join(wanted.split())
            for a in model.actions(s):
                if "".join(repr(a).split()) == key:
                    t = model.next_state(s, a)
                    if t is not None:
                        s = t
                        trace.append((a, s))
                        break
            else:
                raise BadRequest(409, f"step {i + 1}: {wanted} is not enabled there")
        return trace

    def describe(self, trace: list[tuple[Any, Any]]) -> dict[str, Any]:
        model = self.model
        s = trace[-1][1]
        actions = []
        for a in model.actions(s):
            t = model.next_state(s, a)
            if t is not None:
                actions.append({"action": repr(a), "kind": type(a).__name__, "leads_to": self.summary(t)})
        props = [{"name": p.name, "kind": p.kind, "description": p.description, "holds": bool(p.predicate(s))}
                 for p in model.properties if p.kind in ("always", "sometimes")]
        from checker.traces.render import witness

        for p in props:
            if p["kind"] == "always" and not p["holds"]:
                p["witness"] = witness(model, p["name"], s)
        return {"steps": len(trace) - 1, "state": model.to_json(s), "summary": self.summary(s),
                "previous": model.to_json(trace[-2][1]) if len(trace) > 1 else None,
                "actions": actions, "properties": props,
                "path": [{"action": None if a is None else repr(a), "summary": self.summary(t)} for a, t in trace]}

    def from_itf(self, text: Any) -> dict[str, Any]:
        from checker.traces import itf

        if not isinstance(text, str):
            raise BadRequest(400, "itf must be the text of an ITF trace")
        try:
            doc = json.loads(text)
            itf.validate(doc)
        except (ValueError, itf.ItfError) as e:
            raise BadRequest(400, f"not an ITF trace: {' '.join(str(e).split())[:300]}") from None
        steps = itf.steps(doc)
        first = steps[0][1]
        init = next((i for i, s in enumerate(self.inits)
                     if all(self.model.to_json(s).get(k) == v for k, v in first.items())), None)
        if init is None:
            raise BadRequest(409, "the trace's first state is no initial state of this model")
        path = [a for a, _ in steps[1:]]
        if any(a is None for a in path):
            raise BadRequest(409, "the trace has a step that names no action")
        self.follow(init, path)
        return {"init": init, "path": path}

    def to_itf(self, init: Any, path: Any) -> dict[str, Any]:
        from checker.traces import itf

        trace = self.follow(init, path)
        return itf.to_itf(self.model, trace, itf.run_meta(self.rc))


def _handler(explorer: Explorer) -> type[BaseHTTPRequestHandler]:
    page = PAGE.read_text().replace("__TITLE__", f"kcheck explore: {explorer.rc.model} {explorer.rc.variant}"
                                    f" ({explorer.rc.preset})")

    class Handler(BaseHTTPRequestHandler):
        server_version = "kcheck-explore"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal is the user's
            pass

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, value: Any) -> None:
            self._send(status, json.dumps(value).encode(), "application/json")

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path in ("/", "/index.html") or self.path.startswith("/#") or self.path.startswith("/?"):
                self._send(200, page.encode(), "text/html; charset=utf-8")
            elif self.path == "/favicon.ico":
                self._send(204, b"", "image/x-icon")
            else:
                self._json(404, {"error": f"no such page: {self.path[:200]}"})

        def do_POST(self) -> None:  # noqa: N802
            try:
                given = (self.headers.get("Content-Length") or "0").strip()
                if not (given.isascii() and given.isdigit()):
                    raise BadRequest(400, f"Content-Length must be a number of bytes, got {given[:40]!r}")
                length = int(given)
                if length > MAX_BODY:
                    raise BadRequest(413, f"a request body of more than {MAX_BODY:,} bytes")
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    raise BadRequest(400, "the body must be JSON") from None
                if not isinstance(body, dict):
                    raise BadRequest(400, "the body must be a JSON object")
                if self.path == "/api/state":
                    self._json(200, explorer.describe(explorer.follow(body.get("init", 0), body.get("path", []))))
                elif self.path == "/api/trace":
                    self._json(200, explorer.from_itf(body.get("itf")))
                elif self.path == "/api/itf":
                    self._json(200, explorer.to_itf(body.get("init", 0), body.get("path", [])))
                else:
                    raise BadRequest(404, f"no such endpoint: {self.path[:200]}")
            except BadRequest as e:
                self._json(e.status, {"error": str(e)})
            except Exception as e:  # a model that raises: the page shows it, the server goes on
                self._json(500, {"error": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"})

    return Handler


def serve(rc: RunConfig, port: int = 0) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 (port 0: a free one), not yet serving (call serve_forever)."""
    try:
        return ThreadingHTTPServer(("127.0.0.1", port), _handler(Explorer(rc)))
    except OSError as e:
        raise ConfigError(f"--port {port}: {e.strerror or e}") from None


def start_in_thread(rc: RunConfig, port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """For tests and notebooks: a serving server in a daemon thread, and its URL."""
    server = serve(rc, port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


# --- the command ---------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from checker.cli.options import add_config_arguments

    add_config_arguments(parser)
    parser.add_argument("--port", type=int, default=0, metavar="N",
                        help="listen on 127.0.0.1:N (default: a free port, printed)")


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM: 0; bad input 2."""
    from checker.cli.options import run_config

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be 0..65535, got {args.port}")
    server = serve(run_config(args), args.port)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    print(f"kcheck: explore {url} (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    print("kcheck: explore stopped", file=sys.stderr)
    return 0
