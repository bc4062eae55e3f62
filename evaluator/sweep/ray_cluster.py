"""How a sweep reaches Ray: a Ray it starts on this machine, or a cluster the user names.

The local Ray listens on 127.0.0.1 only and requires a token. Ray turns a node address of
127.0.0.1 into the machine's outside address unless it is told not to (its Windows/macOS
setting, `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`); with the node on loopback, Ray's GCS, raylet,
object manager, agents, the driver and every worker bind there (checked by
tests/evaluator/sweep/test_ray_local.py, which lists the listening sockets of every process this Ray starts).
Loopback is still shared by every user of the machine, so the local Ray also turns on Ray's
token authentication: the token is the user's (`RAY_AUTH_TOKEN` or `RAY_AUTH_TOKEN_PATH`) or a
fresh random one that lives only in the environment of this process and of the Ray processes
it starts (never on disk, never printed).

A cluster given by address (`auto`, `HOST:PORT`, `ray://HOST:PORT`) is Ray's own business:
its authentication comes from the user's environment (`RAY_AUTH_MODE=token` and the token),
read by Ray itself; polyprobe only explains a refused connection.

Ray is an optional extra (`pip install 'polyprobe[ray]'`), imported only here and in the
executor."""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import time
from collections.abc import Iterator
from typing import Any

from evaluator.errors import EvaluationError

logger = logging.getLogger(__name__)
LOOPBACK = "127.0.0.1"
_LOCAL_NODE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""0: Ray keeps a node address of 127.0.0.1 instead of replacing it by the outside address (for
the processes the local Ray starts; this process is told through _loopback_kept)."""

_token: str | None = None


def import_ray() -> Any:
    try:
        import ray  # optional extra: only a Ray sweep needs it
    except ImportError:
        raise EvaluationError(
            "--executor ray needs Ray: pip install 'polyprobe[ray]' (on the driver and on every worker node)"
        ) from None
    return ray


def _process_token() -> str:
    """One random token per process, so that Ray's cached token stays right across local Rays."""
    global _token
    if _token is None:
        _token = secrets.token_hex(32)
    return _token


def local_environment(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The variables a local Ray is started with: node on loopback, token authentication on, the
    user's own token when they have one."""
    wanted = {_LOCAL_NODE: "0", "RAY_AUTH_MODE": "token"}
    if not environ.get("RAY_AUTH_TOKEN") and not environ.get("RAY_AUTH_TOKEN_PATH"):
        wanted["RAY_AUTH_TOKEN"] = _process_token()
    return wanted


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """``values`` in os.environ (inherited by the Ray processes started meanwhile), then the
    environment as it was."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _loopback_kept() -> Iterator[None]:
    """Ray turns the host 127.0.0.1 (or localhost) into this machine's outside address, except
    on Windows and macOS; for the block it keeps loopback as loopback, as it does there. The
    setting is read when an address is resolved, so it is set on the imported module."""
    from ray._private import ray_constants

    before = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before


def _reload_settings() -> None:
    """Make an imported Ray read the authentication variables as they are now (it reads them when
    it is imported, and caches the token): what Ray itself does when it turns authentication on."""
    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def _check_local(ray: Any) -> None:
    """Refuse a local Ray that is not on loopback or not authenticated (a Ray release that
    changed how either is set): it is stopped before any work is sent to it."""
    from ray._raylet import AuthenticationMode, get_authentication_mode  # type: ignore[attr-defined]

    addresses = sorted({node["NodeManagerAddress"] for node in ray.nodes()})
    if addresses != [LOOPBACK]:
        raise EvaluationError(
            f"the local Ray started on {', '.join(addresses)}, not only on {LOOPBACK}; "
            "polyprobe does not run a sweep on it (pin ray as polyprobe[ray] does)"
        )
    if get_authentication_mode() != AuthenticationMode.TOKEN:
        raise EvaluationError(
            "the local Ray started without token authentication; polyprobe does not run a sweep on it "
            "(pin ray as polyprobe[ray] does)"
        )


@contextlib.contextmanager
def local_ray(ray: Any, **init: Any) -> Iterator[None]:
    """A Ray on this machine for the duration of the block: every socket on 127.0.0.1, token
    authentication on, no dashboard; stopped at the end (``init``: more ray.init arguments)."""
    with _environment(local_environment(os.environ)), _loopback_kept():
        _reload_settings()
        try:
            ray.init(
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.WARNING,
                _node_ip_address=LOOPBACK,
                **init,
            )
        except BaseException:
            ray.shutdown()  # whatever it had started
            raise
        try:
            _check_local(ray)
            yield
        finally:
            ray.shutdown()


def _refused(address: str, exc: BaseException) -> EvaluationError:
    """A connection that failed, with what to check; the token itself is never shown."""
    auth = os.environ.get("RAY_AUTH_MODE", "").lower() == "token"
    hint = (
        "check that the token in RAY_AUTH_TOKEN (or the file in RAY_AUTH_TOKEN_PATH) is the cluster's"
        if auth
        else "if the cluster uses token authentication, set RAY_AUTH_MODE=token and RAY_AUTH_TOKEN "
        "(or RAY_AUTH_TOKEN_PATH) in this shell"
    )
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return EvaluationError(f"--ray-address {address}: could not connect to Ray ({first}); {hint}")


CLIENT_ATTEMPTS = 3
"""Ray Client connections tried: Ray's client server can fail to start the per-client server of
the first connection after a head starts ("Starting Ray client server failed", seen with 2.60);
the next attempt gets one."""


def _connect_client(ray: Any, address: str) -> None:
    for attempt in range(1, CLIENT_ATTEMPTS + 1):
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
            return
        except ConnectionAbortedError as exc:
            if "Starting Ray client server failed" not in str(exc) or attempt == CLIENT_ATTEMPTS:
                raise
            logger.info(
                "Ray Client: the server could not start a session (attempt %d); trying again", attempt
            )
            with contextlib.suppress(Exception):
                ray.shutdown()
            time.sleep(attempt)


@contextlib.contextmanager
def cluster(ray: Any, address: str) -> Iterator[None]:
    """The Ray cluster at ``address`` for the duration of the block, then disconnected. A head
    on this machine's loopback (`ray start --head --node-ip-address 127.0.0.1`) is reached there."""
    with contextlib.ExitStack() as stack:
        _reload_settings()  # RAY_AUTH_* as they are now, whatever Ray read when it was imported
        try:
            if address.startswith("ray://"):
                _connect_client(ray, address)
            else:
                stack.enter_context(_loopback_kept())
                ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except (ConnectionError, RuntimeError, ray.exceptions.RayError) as exc:
            raise _refused(address, exc) from None
        try:
            yield
        finally:
            ray.shutdown()


@contextlib.contextmanager
def connected(address: str | None) -> Iterator[Any]:
    """Ray, connected for the duration of the block: to the cluster at ``address``, to a Ray this
    process is already connected to (left as it is), or to a local Ray started here."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    with cluster(ray, address) if address else local_ray(ray):
        yield ray
