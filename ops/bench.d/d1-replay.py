#!/usr/bin/env python3
"""Replays the API requests the local D1 server logged (it must run with --keep-bodies) as a bare client would: the
same bodies in the same order, sent by one curl (libcurl, the HTTP client Gatehouse uses) over one kept-alive
connection, each answer written to /dev/null unparsed. Prints the milliseconds they took: the time those pages take to
cross the wire (the latency the server adds, its own work, the bytes), the baseline a Gatehouse scan on D1 is set
against.

Usage: d1-replay.py CONTROL_URL API_BASE_URL   (account from GATEHOUSE_TEST_D1_ACCOUNT, database from
D1_REPLAY_DATABASE, token from CLOUDFLARE_API_TOKEN: it goes to curl in a config file, never on a command line)"""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request


def quoted(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    control, base = sys.argv[1], sys.argv[2]
    with urllib.request.urlopen(control + "/requests") as answer:
        log = json.load(answer)["log"]
    bodies = [(entry["endpoint"], entry["body"]) for entry in log if entry.get("body") is not None]
    if not bodies:
        sys.exit("d1-replay: the log holds no request bodies (start the server with --keep-bodies)")
    account, database = os.environ["GATEHOUSE_TEST_D1_ACCOUNT"], os.environ["D1_REPLAY_DATABASE"]
    token = os.environ["CLOUDFLARE_API_TOKEN"]
    with tempfile.TemporaryDirectory() as scratch:
        sections = []
        for number, (endpoint, body) in enumerate(bodies):
            path = os.path.join(scratch, f"body-{number}.json")
            with open(path, "w") as file:
                file.write(body)
            sections.append("\n".join([
                f"url = {quoted(f'{base}/accounts/{account}/d1/database/{database}/{endpoint}')}",
                f"header = {quoted('Authorization: Bearer ' + token)}",
                'header = "Content-Type: application/json"',
                f"data-binary = {quoted('@' + path)}",
                'output = "/dev/null"',
                "fail",
                "silent",
            ]))
        config = os.path.join(scratch, "curl.config")
        with open(config, "w") as file:
            file.write("\nnext\n".join(sections) + "\n")
        started = time.monotonic()
        finished = subprocess.run(["curl", "--config", config])
        elapsed = time.monotonic() - started
    if finished.returncode != 0:
        sys.exit(f"d1-replay: curl failed replaying the requests (exit {finished.returncode})")
    print(round(elapsed * 1000))


main()
