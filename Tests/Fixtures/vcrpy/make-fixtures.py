"""Records this folder's VCR.py cassettes against the local httpbin at $HTTPBIN_URL.

Run it through ./make-fixtures (which sets up the pinned VCR.py and starts httpbin), not directly.
The cassettes are written by VCR.py's own JSON serializer; afterwards the random port of the local server is
replaced by FIXED_BASE everywhere (URLs, echoed Host headers, bodies), so that tests can name stable URLs.
"""

import json
import os
import sys
import tempfile
from urllib.parse import urlsplit

import requests
import vcr

HERE = os.path.dirname(os.path.abspath(__file__))
# The tests name these URLs; the port is the one the project's docs and Cassettes.bundle/Examples use.
FIXED_BASE = "http://127.0.0.1:18765"


def record_httpbin_basics(base, path):
    """What a typical client does: queries, JSON and form posts, an error status, redirects, gzip, cookies."""
    recorder = vcr.VCR(serializer="json", record_mode="all", decode_compressed_response=False)
    with recorder.use_cassette(path), requests.Session() as session:
        session.get(f"{base}/get", params={"q": "swift vcr", "page": 2})
        session.post(f"{base}/post", json={"name": "Ada", "languages": ["swift", "python"]})
        # A password in a form: a secret `vcr lint` must find.
        session.post(f"{base}/post", data={"user": "bob", "password": "hunter2"})
        session.get(f"{base}/status/404")
        session.get(f"{base}/redirect/2")  # three interactions: 302, 302, 200
        session.get(f"{base}/gzip")
        # Not followed: the 302 carries the Set-Cookie headers (another secret for lint).
        session.get(f"{base}/cookies/set", params={"session": "abc123", "theme": "dark"}, allow_redirects=False)


def rebase(value, old, new):
    """`value` with every `old` host:port replaced by `new`, in every string it holds."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [rebase(item, old, new) for item in value]
    if isinstance(value, dict):
        return {key: rebase(item, old, new) for key, item in value.items()}
    return value


def body_text(message):
    body = message.get("body")
    if isinstance(body, dict):
        body = body.get("string")
    return body if isinstance(body, str) else None


def rebase_cassette(path, base):
    """Moves the cassette from the server's random port to FIXED_BASE, keeping Content-Length true."""
    old, new = urlsplit(base).netloc, urlsplit(FIXED_BASE).netloc
    with open(path, encoding="utf-8") as file:
        cassette = json.load(file)
    for interaction in cassette["interactions"]:
        for key in ("request", "response"):
            message = interaction[key]
            before = body_text(message)
            interaction[key] = message = rebase(message, old, new)
            after = body_text(message)
            lengths = message.get("headers", {}).get("Content-Length")
            # Only a length that counted the text as stored (not a compressed body) follows the change.
            if before is not None and lengths == [str(len(before.encode()))]:
                message["headers"]["Content-Length"] = [str(len(after.encode()))]
    return cassette


def main():
    base = os.environ.get("HTTPBIN_URL")
    if not base:
        sys.exit("make-fixtures.py: HTTPBIN_URL is not set; run Tests/Fixtures/vcrpy/make-fixtures instead")
    base = base.rstrip("/")
    with tempfile.TemporaryDirectory() as folder:
        recorded = os.path.join(folder, "httpbin-basics.json")
        record_httpbin_basics(base, recorded)
        cassette = rebase_cassette(recorded, base)
    target = os.path.join(HERE, "httpbin-basics.json")
    with open(target, "w", encoding="utf-8") as file:
        # The same layout VCR.py's JSON serializer writes.
        file.write(json.dumps(cassette, indent=4) + "\n")
    print(f"wrote {os.path.relpath(target)}: {len(cassette['interactions'])} interactions, "
          f"{base} rewritten to {FIXED_BASE}")


if __name__ == "__main__":
    main()
