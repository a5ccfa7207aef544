#!/usr/bin/env bash
# Apple client secrets: Gatehouse's in-process minting rate (one thread) against `openssl speed -elapsed ecdsap256`
# sign/s measured in the same run (one thread) and against PyJWT's in-process mint rate.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

seconds=2
# Alternating pairs (paired_ratio): on a shared 2-core machine one round of either can land on a slow moment, and a
# ratio of two single rounds then says more about the moment than about the code.
mint_gatehouse() {
  "$GATEHOUSE_BIN" apple secret bench --seconds "$seconds" --json \
    | python3 -c 'import json,sys; print("%.0f" % json.load(sys.stdin)["tokensPerSecond"])'
}
# -elapsed: wall-clock time, as Gatehouse and PyJWT count; by default `openssl speed` divides by its CPU time, which on
# a busy machine overstates its rate (57,169 sign/s by CPU time against 21,303 by the clock, one after the other).
sign_openssl() {
  openssl speed -elapsed -seconds "$seconds" ecdsap256 2>/dev/null | awk '/ecdsa \(nistp256\)/ { printf "%.0f", $(NF-1) }'
}
python="${GATEHOUSE_ROOT:-.}/.venv/bin/python"
mint_pyjwt() {
  "$python" - "$seconds" <<'PY'
import sys, time, jwt
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives import serialization
key = ec.generate_private_key(ec.SECP256R1())
pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
signing_key = serialization.load_pem_private_key(pem, None)
seconds, count, start = float(sys.argv[1]), 0, time.perf_counter()
while time.perf_counter() - start < seconds:
    for _ in range(256):
        now = int(time.time())
        jwt.encode({"iss": "BENCHTEAM1", "iat": now, "exp": now + 3600, "aud": "https://appleid.apple.com", "sub": "com.example.bench"},
                   signing_key, algorithm="ES256", headers={"kid": "BENCHKEY01"})
    count += 256
print("%.0f" % (count / (time.perf_counter() - start)))
PY
}

read -r vs_ssl vs_ssl_lo vs_ssl_hi gatehouse gh_lo gh_hi openssl_sign ssl_lo ssl_hi < <(paired_ratio mint_gatehouse sign_openssl)
read -r vs_py vs_py_lo vs_py_hi _ _ _ pyjwt py_lo py_hi < <(paired_ratio mint_gatehouse mint_pyjwt)

row "apple: client secrets minted in-process (1 thread)" "$gatehouse" "tokens/s" "" "complete ES256 JWT, raw r||s; median of ${BENCH_PAIRS:-5} runs of ${seconds} s (range $gh_lo-$gh_hi)"
row "apple: openssl speed ecdsap256 sign (1 thread)" "$openssl_sign" "sign/s" "" "same run, alternating (range $ssl_lo-$ssl_hi)"
row "apple: PyJWT in-process mint (1 thread)" "$pyjwt" "tokens/s" "" "cryptography backend, same claims, alternating (range $py_lo-$py_hi)"
row "apple: Gatehouse / openssl sign" "$(spread "$vs_ssl" "$vs_ssl_lo" "$vs_ssl_hi")" "ratio" ">= 0.80" "$(pairs_note)"
row "apple: Gatehouse / PyJWT" "$(spread "$vs_py" "$vs_py_lo" "$vs_py_hi")" "ratio" "~1.5" "$(pairs_note)"
