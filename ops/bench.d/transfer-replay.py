#!/usr/bin/env python3
"""The baseline for the Apple transfer rows of ops/bench.d/95-transfer.sh: the stand-in alone, asked the same
number of /auth/usermigrationinfo calls at the same concurrency by a bare client (one new connection a call, as
Gatehouse's libcurl makes; nothing written anywhere), so `collect`'s rate can be read against what the stand-in can
answer at all.

Usage: transfer-replay.py BASE_URL KEY_FILE KID TEAM TARGET COUNT CONCURRENCY → prints requests/s
"""
import http.client
import sys
import threading
import time
import urllib.parse

import jwt
from cryptography.hazmat.primitives import serialization


def main():
    base, key_file, kid, team, target, count, concurrency = sys.argv[1:8]
    count, concurrency = int(count), int(concurrency)
    url = urllib.parse.urlsplit(base)
    with open(key_file, "rb") as handle:
        key = serialization.load_pem_private_key(handle.read(), password=None)
    now = int(time.time())
    secret = jwt.encode({"iss": team, "iat": now, "exp": now + 3600, "aud": "https://appleid.apple.com", "sub": "com.example.app"},
                        key, algorithm="ES256", headers={"kid": kid})

    def post(path, form, token=None):
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        connection.request("POST", path, body=urllib.parse.urlencode(form), headers=headers)
        answer = connection.getresponse()
        body = answer.read()
        connection.close()
        return answer.status, body

    import json
    status, body = post("/auth/token", {"grant_type": "client_credentials", "scope": "user.migration", "client_id": "com.example.app", "client_secret": secret})
    assert status == 200, body
    token = json.loads(body)["access_token"]
    counter = iter(range(count))
    lock = threading.Lock()

    def work():
        while True:
            with lock:
                index = next(counter, None)
            if index is None:
                return
            status, _ = post("/auth/usermigrationinfo", {"sub": f"bench.{index}", "target": target, "client_id": "com.example.app", "client_secret": secret}, token)
            assert status == 200, status

    start = time.perf_counter()
    threads = [threading.Thread(target=work) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print("%.1f" % (count / (time.perf_counter() - start)))


if __name__ == "__main__":
    main()
