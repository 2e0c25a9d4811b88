"""Tests for attnexp.data.download against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import http.server
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from attnexp.data.download import (
    ChecksumError,
    DownloadError,
    fetch,
    file_digest,
    find_in_mirror,
    obtain,
    verify_checksum,
)

BODY = b"label\ttext\n1\tattention is not explanation\n" * 50
OTHER = b"this is not the file you are looking for\n"
SHA256 = hashlib.sha256(BODY).hexdigest()
MD5 = hashlib.md5(BODY).hexdigest()
FAST = {"backoff": 0.01}  # Keeps retry sleeps negligible.


# --------------------------------------------------------------------------- loopback server

Route = Callable[[http.server.BaseHTTPRequestHandler, int], None]


def _send(handler: http.server.BaseHTTPRequestHandler, body: bytes, length: int | None = None) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/octet-stream")
    handler.send_header("Content-Length", str(len(body) if length is None else length))
    handler.end_headers()
    handler.wfile.write(body)


class LoopbackServer:
    """A ThreadingHTTPServer on 127.0.0.1 whose routes are functions of (handler, nth request)."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: Counter[str] = Counter()
        self.stop = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                with server._lock:
                    server.hits[self.path] += 1
                    nth = server.hits[self.path]
                route = server.routes.get(self.path)
                if route is None:
                    self.send_error(404)
                else:
                    route(self, nth)

            def log_message(self, format: str, *args) -> None:  # Keep test output clean.
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        # A short poll interval keeps shutdown() (which waits for the next poll) fast.
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def url(self, path: str) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}{path}"

    @property
    def total_hits(self) -> int:
        return sum(self.hits.values())


@pytest.fixture
def server():
    srv = LoopbackServer()
    srv.routes.update(
        {
            "/good.tsv": lambda h, n: _send(h, BODY),
            "/wrong.tsv": lambda h, n: _send(h, OTHER),
            # Promise more bytes than are sent, then close: a connection cut mid-body.
            "/truncated.tsv": lambda h, n: _send(h, BODY[:100], length=len(BODY)),
            "/truncated-once.tsv": lambda h, n: _send(h, BODY[:100], len(BODY)) if n == 1 else _send(h, BODY),
            "/unavailable-once.tsv": lambda h, n: h.send_error(503) if n == 1 else _send(h, BODY),
            # Sleeps past the client's timeout; waits on the stop event rather than
            # time.sleep so teardown never has to sit out the delay.
            "/slow.tsv": lambda h, n: None if srv.stop.wait(2.0) else _send(h, BODY),
        }
    )
    srv.thread.start()
    try:
        yield srv
    finally:
        srv.stop.set()  # Releases any handler still sleeping in the slow route.
        srv.httpd.shutdown()
        srv.httpd.server_close()
        srv.thread.join(timeout=5)


def _closed_port_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/x.tsv"


# --------------------------------------------------------------------------- checksums


def test_file_digest_matches_hashlib(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(BODY)
    assert file_digest(path) == SHA256
    assert file_digest(path, "md5") == MD5


def test_verify_checksum_returns_sha256_for_either_algorithm(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(BODY)
    assert verify_checksum(path, sha256=SHA256.upper(), origin="x") == SHA256
    assert verify_checksum(path, md5=MD5, origin="x") == SHA256


def test_verify_checksum_mismatch_names_origin_algorithm_and_digests(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(OTHER)
    with pytest.raises(ChecksumError) as caught:
        verify_checksum(path, md5=MD5, origin="http://example.invalid/f")
    message = str(caught.value)
    assert "http://example.invalid/f" in message
    assert "md5" in message
    assert MD5 in message and hashlib.md5(OTHER).hexdigest() in message


@pytest.mark.parametrize("digests", [{}, {"sha256": SHA256, "md5": MD5}])
def test_exactly_one_digest_is_required(tmp_path: Path, server: LoopbackServer, digests: dict) -> None:
    path = tmp_path / "f"
    path.write_bytes(BODY)
    with pytest.raises(ValueError):
        verify_checksum(path, origin="x", **digests)
    with pytest.raises(ValueError):
        fetch(server.url("/good.tsv"), tmp_path / "dest", **digests)
    with pytest.raises(ValueError):
        obtain(server.url("/good.tsv"), tmp_path / "dest", **digests)
    assert server.total_hits == 0  # Rejected before any network traffic.


# --------------------------------------------------------------------------- fetch


def test_fetch_good_file(tmp_path: Path, server: LoopbackServer) -> None:
    dest = tmp_path / "raw" / "good.tsv"
    lines: list[str] = []
    assert fetch(server.url("/good.tsv"), dest, sha256=SHA256, log=lines.append, **FAST) == SHA256
    assert dest.read_bytes() == BODY
    assert sorted(p.name for p in dest.parent.iterdir()) == ["good.tsv"]  # No temp file left.
    assert lines and server.url("/good.tsv") in lines[0]


def test_fetch_verifies_md5(tmp_path: Path, server: LoopbackServer) -> None:
    dest = tmp_path / "good.tsv"
    assert fetch(server.url("/good.tsv"), dest, md5=MD5, **FAST) == SHA256
    assert dest.read_bytes() == BODY


def test_fetch_checksum_mismatch_is_not_retried_and_leaves_nothing(tmp_path: Path, server: LoopbackServer) -> None:
    out = tmp_path / "out"
    url = server.url("/wrong.tsv")
    with pytest.raises(ChecksumError) as caught:
        fetch(url, out / "wrong.tsv", sha256=SHA256, **FAST)
    message = str(caught.value)
    assert url in message
    assert SHA256 in message and hashlib.sha256(OTHER).hexdigest() in message
    assert list(out.iterdir()) == []
    assert server.hits["/wrong.tsv"] == 1


def test_failed_fetch_keeps_previous_dest(tmp_path: Path, server: LoopbackServer) -> None:
    dest = tmp_path / "data.tsv"
    dest.write_bytes(b"previous")
    with pytest.raises(ChecksumError):
        fetch(server.url("/wrong.tsv"), dest, sha256=SHA256, **FAST)
    assert dest.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["data.tsv"]


def test_fetch_truncated_body_is_retried_then_fails(tmp_path: Path, server: LoopbackServer) -> None:
    out = tmp_path / "out"
    url = server.url("/truncated.tsv")
    with pytest.raises(DownloadError) as caught:
        fetch(url, out / "t.tsv", sha256=SHA256, retries=2, **FAST)
    assert not isinstance(caught.value, ChecksumError)
    message = str(caught.value)
    assert url in message and "truncated" in message and "mirror=DIR" in message
    assert server.hits["/truncated.tsv"] == 3
    assert list(out.iterdir()) == []


def test_fetch_truncated_once_then_complete_succeeds(tmp_path: Path, server: LoopbackServer) -> None:
    dest = tmp_path / "t.tsv"
    assert fetch(server.url("/truncated-once.tsv"), dest, sha256=SHA256, **FAST) == SHA256
    assert dest.read_bytes() == BODY
    assert server.hits["/truncated-once.tsv"] == 2
    assert [p.name for p in tmp_path.iterdir()] == ["t.tsv"]


def test_fetch_404_is_not_retried(tmp_path: Path, server: LoopbackServer) -> None:
    out = tmp_path / "out"
    url = server.url("/missing.tsv")
    with pytest.raises(DownloadError) as caught:
        fetch(url, out / "m.tsv", sha256=SHA256, retries=3, **FAST)
    assert url in str(caught.value) and "404" in str(caught.value)
    assert server.hits["/missing.tsv"] == 1
    assert list(out.iterdir()) == []


def test_fetch_timeout_is_retried_then_fails(tmp_path: Path, server: LoopbackServer) -> None:
    out = tmp_path / "out"
    started = time.monotonic()
    with pytest.raises(DownloadError) as caught:
        fetch(server.url("/slow.tsv"), out / "s.tsv", sha256=SHA256, timeout=0.5, retries=1, **FAST)
    assert time.monotonic() - started < 1.9  # Gave up on the timeout, not the server's 2 s delay.
    assert "timed out" in str(caught.value)
    assert server.hits["/slow.tsv"] == 2
    assert list(out.iterdir()) == []


def test_fetch_of_a_host_that_does_not_resolve_fails_at_once(tmp_path: Path) -> None:
    # offline (or a misspelt host): one attempt, no back-off, the mirror named in the error
    lines: list[str] = []
    started = time.monotonic()
    with pytest.raises(DownloadError) as caught:
        fetch(
            "http://no-such-host.invalid/x.tsv",
            tmp_path / "x.tsv",
            sha256=SHA256,
            retries=4,
            backoff=5.0,
            log=lines.append,
        )
    assert time.monotonic() - started < 4.0  # four retries would sleep 5 + 10 + 20 + 40 s
    assert "gaierror" in str(caught.value) and "mirror" in str(caught.value) and "after" not in str(caught.value)
    assert sum(line.startswith("GET ") for line in lines) == 1


def test_fetch_transient_503_then_success(tmp_path: Path, server: LoopbackServer) -> None:
    dest = tmp_path / "u.tsv"
    lines: list[str] = []
    assert fetch(server.url("/unavailable-once.tsv"), dest, sha256=SHA256, log=lines.append, **FAST) == SHA256
    assert dest.read_bytes() == BODY
    assert server.hits["/unavailable-once.tsv"] == 2
    assert any("503" in line for line in lines)


# --------------------------------------------------------------------------- mirror + obtain


def test_find_in_mirror_searches_recursively(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "good.tsv").write_bytes(BODY)
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "good.tsv").write_bytes(BODY)  # Identical duplicate: fine.
    assert find_in_mirror(tmp_path, "good.tsv") == tmp_path / "a" / "b" / "good.tsv"
    assert find_in_mirror(tmp_path, "absent.tsv") is None


def test_find_in_mirror_rejects_conflicting_copies(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "good.tsv").write_bytes(BODY)
    (tmp_path / "good.tsv").write_bytes(OTHER)
    with pytest.raises(DownloadError) as caught:
        find_in_mirror(tmp_path, "good.tsv")
    assert str(tmp_path / "a" / "good.tsv") in str(caught.value)
    assert str(tmp_path / "good.tsv") in str(caught.value)


def test_find_in_mirror_requires_a_folder(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="nowhere"):
        find_in_mirror(tmp_path / "nowhere", "good.tsv")
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(DownloadError, match="file"):
        find_in_mirror(tmp_path / "file", "good.tsv")


def test_obtain_mirror_hit_makes_no_request(tmp_path: Path, server: LoopbackServer) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "sub").mkdir(parents=True)
    (mirror / "sub" / "good.tsv").write_bytes(BODY)
    dest = tmp_path / "raw" / "data.tsv"
    record = obtain(server.url("/good.tsv"), dest, mirror=mirror, sha256=SHA256, **FAST)
    assert record == {
        "file": "data.tsv",
        "origin": str(mirror / "sub" / "good.tsv"),
        "sha256": SHA256,
    }
    assert dest.read_bytes() == BODY
    assert server.total_hits == 0
    assert [p.name for p in dest.parent.iterdir()] == ["data.tsv"]


def test_obtain_mirror_with_explicit_filename(tmp_path: Path, server: LoopbackServer) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "renamed.tsv").write_bytes(BODY)
    record = obtain(server.url("/good.tsv"), tmp_path / "d.tsv", filename="renamed.tsv", mirror=mirror, md5=MD5)
    assert record["origin"] == str(mirror / "renamed.tsv") and record["sha256"] == SHA256
    assert server.total_hits == 0


def test_obtain_mirror_copy_checked_by_sha1(tmp_path: Path, server: LoopbackServer) -> None:
    # fastText's wiki.simple.vec, which J&W used, is published with a sha1 only
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "good.tsv").write_bytes(BODY)
    record = obtain(server.url("/good.tsv"), tmp_path / "d.tsv", mirror=mirror, sha1=hashlib.sha1(BODY).hexdigest())
    assert record["origin"] == str(mirror / "good.tsv") and record["sha256"] == SHA256
    assert server.total_hits == 0
    with pytest.raises(ChecksumError):
        obtain(server.url("/good.tsv"), tmp_path / "e.tsv", mirror=mirror, sha1=hashlib.sha1(OTHER).hexdigest(), **FAST)
    assert not (tmp_path / "e.tsv").exists()


def test_obtain_corrupt_mirror_copy_raises_and_leaves_nothing(tmp_path: Path, server: LoopbackServer) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "good.tsv").write_bytes(OTHER)
    out = tmp_path / "out"
    with pytest.raises(ChecksumError) as caught:
        obtain(server.url("/good.tsv"), out / "good.tsv", mirror=mirror, sha256=SHA256, **FAST)
    assert str(mirror / "good.tsv") in str(caught.value)
    assert list(out.iterdir()) == []
    assert server.total_hits == 0


def test_obtain_mirror_miss_falls_back_to_url(tmp_path: Path, server: LoopbackServer) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "unrelated.tsv").write_bytes(OTHER)
    url = server.url("/good.tsv")
    record = obtain(url, tmp_path / "good.tsv", mirror=mirror, sha256=SHA256, **FAST)
    assert record == {"file": "good.tsv", "origin": url, "sha256": SHA256}
    assert server.hits["/good.tsv"] == 1


def test_obtain_missing_mirror_folder(tmp_path: Path, server: LoopbackServer) -> None:
    with pytest.raises(DownloadError, match="nowhere"):
        obtain(server.url("/good.tsv"), tmp_path / "g.tsv", mirror=tmp_path / "nowhere", sha256=SHA256)
    assert server.total_hits == 0


def test_obtain_unreachable_url_without_mirror(tmp_path: Path) -> None:
    url = _closed_port_url()
    out = tmp_path / "out"
    with pytest.raises(DownloadError) as caught:
        obtain(url, out / "x.tsv", sha256=SHA256, retries=1, **FAST)
    message = str(caught.value)
    assert url in message and "mirror" in message
    assert list(out.iterdir()) == []


def test_a_failed_download_names_the_file_to_put_in_a_folder_and_pass_as_the_mirror(tmp_path: Path) -> None:
    with pytest.raises(DownloadError) as caught:
        obtain(_closed_port_url(), tmp_path / "x.tsv", filename="corpus.tsv", sha256=SHA256, retries=0)
    assert str(caught.value).endswith(". To run offline, put corpus.tsv in a folder and pass --config mirror=DIR.")
    assert "\n" not in str(caught.value)


def test_a_failed_download_with_a_mirror_names_the_mirror_and_the_file_it_lacks(tmp_path: Path) -> None:
    """With a mirror passed, the advice is the file missing from it, not to pass a mirror again."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "unrelated.tsv").write_bytes(OTHER)
    url = _closed_port_url()
    with pytest.raises(DownloadError) as caught:
        obtain(url, tmp_path / "x.tsv", filename="corpus.tsv", mirror=mirror, sha256=SHA256, retries=0)
    message = str(caught.value)
    assert url in message and "\n" not in message
    assert message.endswith(
        f". The mirror {mirror} has no file named corpus.tsv: put it there (any subfolder) and rerun."
    )
    assert "mirror=DIR" not in message


def test_a_partial_download_left_by_a_killed_job_is_removed_by_the_next(tmp_path: Path, server: LoopbackServer) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "good.tsv").write_bytes(BODY)
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / ".data.tsv.k1ll3d.part").write_bytes(BODY[:10])
    obtain(server.url("/good.tsv"), tmp_path / "raw" / "data.tsv", filename="good.tsv", mirror=mirror, sha256=SHA256)
    assert [p.name for p in (tmp_path / "raw").iterdir()] == ["data.tsv"]
