"""A MongoDB-compatible private server: the project's Go ``stratabench-mongo``.

Needs ``.build/go/stratabench-mongo`` (or ``$STRATABENCH_GO_BIN_DIR``), built
from ``go/cmd/stratabench-mongo`` on FerretDB with SQLite; when it is
missing and the Go toolchain is here, starting the service builds it. It
speaks MongoDB's wire protocol on 127.0.0.1, keeps its data in the
temporary directory, has no password and prints ``ready mongodb://...``
once it accepts connections. Its URL is ``mongodb://127.0.0.1:PORT/``.
It is not a real MongoDB: the timings are FerretDB's.

It has no password because it cannot take one: FerretDB 1.24's embeddable
package (``ferretdb.Config``) has no setting for authentication, its
SCRAM accounts (``--test-enable-new-auth``, ``--setup-username``) are
reachable only through its internal packages, which another Go module
cannot import, and its SQLite backend accepts any user name and password.
It listens on 127.0.0.1 only, in a 0700 directory. Giving it a password
means moving to FerretDB 2, which needs PostgreSQL with DocumentDB.

It runs as the invoking user even under root: its binary lives in the
work tree, which the ``nobody`` account may not be able to read.
"""

from __future__ import annotations

import os

from stratabench.errors import StratabenchError, UnavailableError
from stratabench.services import SERVICES
from stratabench.services.base import Service
from stratabench.services.ports import LOOPBACK

__all__ = ["MongodbService"]

PROGRAM = "stratabench-mongo"


@SERVICES.register("mongodb")
class MongodbService(Service):
    """The project's MongoDB-compatible server (FerretDB + SQLite) on a free loopback port."""

    drop_root = False
    version_args = None

    def install(self) -> None:
        from stratabench.adapters import golang

        if golang.binary_path(PROGRAM).is_file() or not (golang.GO_DIR / "cmd" / PROGRAM).is_dir():
            return
        try:
            golang.build((PROGRAM,))
        except StratabenchError as exc:
            # A failed build, like a missing toolchain, leaves the service unavailable here.
            raise UnavailableError(f"mongodb: cannot build {PROGRAM}: {exc.message}") from None

    def executable(self) -> str:
        from stratabench.adapters import golang

        path = golang.binary_path(PROGRAM)
        if not os.access(path, os.X_OK):
            raise UnavailableError(
                f"mongodb: {path} is not built; build it with "
                f"`python -c 'from stratabench.adapters import golang; golang.build((\"{PROGRAM}\",))'` (needs Go)"
            )
        return str(path)

    def command(self) -> list[str]:
        return [self.executable(), "--listen", f"{LOOPBACK}:{self.port}", "--dir", str(self.workdir)]

    def url(self) -> str:
        return f"mongodb://{LOOPBACK}:{self.port}/"

    def ready(self) -> bool:
        try:
            return b"ready mongodb://" in self.log_path.read_bytes()
        except OSError:
            return False
