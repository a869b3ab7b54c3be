"""``ctxmodes login PROVIDER --no-browser`` as a real process, finished the way a user on a
machine without a browser finishes it: by pasting the URL the browser was redirected to."""

from __future__ import annotations

import subprocess
import sys
import urllib.parse

from support.token_server import TokenServer


def login_by_pasting(
    provider: str, env: dict[str, str], tokens: TokenServer, authorize_url: str, redirect_uri: str
) -> tuple[int, str, str]:
    """Run the login, read the sign-in URL it prints (it starts with ``authorize_url``),
    let ``tokens`` accept the code for that URL's PKCE challenge, and paste
    ``redirect_uri?code=…&state=…``; the exit status, standard output and error."""
    login = subprocess.Popen(
        [sys.executable, "-m", "ctxmodes", "login", provider, "--no-browser"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert login.stderr is not None
    assert login.stdin is not None
    url = ""
    while not url:
        line = login.stderr.readline()
        assert line, "login printed no URL"
        url = line.strip() if line.startswith(authorize_url) else ""
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    tokens.challenges["browser-code"] = query["code_challenge"]
    login.stdin.write(f"{redirect_uri}?code=browser-code&state={query['state']}\n")
    login.stdin.flush()
    out, err = login.communicate(timeout=30)
    return login.returncode, out, err
