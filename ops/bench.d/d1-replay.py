#!/usr/bin/env python3
"""Replays the API requests the local D1 server logged (it must run with --keep-bodies) as a bare client would:
the same bodies, in the same order, over one kept-alive connection, each answer read whole and not parsed. Prints
the milliseconds they took: the time those pages take to cross the wire (the latency the server adds, its own work,
the bytes), the baseline a Gatehouse scan on D1 is set against.

Usage: d1-replay.py CONTROL_URL API_BASE_URL   (token from CLOUDFLARE_API_TOKEN)"""
import http.client
import json
import os
import sys
import time
import urllib.parse
import urllib.request


def main():
    control, base = sys.argv[1], sys.argv[2]
    with urllib.request.urlopen(control + "/requests") as answer:
        log = json.load(answer)["log"]
    bodies = [(entry["endpoint"], entry["body"]) for entry in log if entry.get("body") is not None]
    if not bodies:
        sys.exit("d1-replay: the log holds no request bodies (start the server with --keep-bodies)")
    url = urllib.parse.urlsplit(base)
    account, database = os.environ["GATEHOUSE_TEST_D1_ACCOUNT"], os.environ["D1_REPLAY_DATABASE"]
    headers = {"Authorization": "Bearer " + os.environ["CLOUDFLARE_API_TOKEN"], "Content-Type": "application/json"}
    connection = http.client.HTTPConnection(url.hostname, url.port)
    started = time.monotonic()
    for endpoint, body in bodies:
        connection.request("POST", f"{url.path}/accounts/{account}/d1/database/{database}/{endpoint}", body.encode(), headers)
        answer = connection.getresponse()
        answer.read()
        if answer.status != 200:
            sys.exit(f"d1-replay: a replayed request answered HTTP {answer.status}")
    print(round((time.monotonic() - started) * 1000))


main()
