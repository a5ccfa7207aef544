#!/usr/bin/env bash
# Apple client secrets: Gatehouse's in-process minting rate (one thread) against `openssl speed ecdsap256`
# sign/s measured in the same run (one thread) and against PyJWT's in-process mint rate.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

seconds=3
# Three alternating rounds of Gatehouse and `openssl speed`, the best of each: on a shared 2-core machine one
# round of either can land on a slow moment, and a ratio of two single rounds then says more about the moment.
gatehouse=0 openssl_sign=0
for _ in 1 2 3; do
  one=$("$GATEHOUSE_BIN" apple secret bench --seconds "$seconds" --json \
    | python3 -c 'import json,sys; print("%.0f" % json.load(sys.stdin)["tokensPerSecond"])')
  if [ "$one" -gt "$gatehouse" ]; then gatehouse=$one; fi
  openssl speed -seconds "$seconds" ecdsap256 > "$BENCH_DIR/openssl-speed.txt" 2>/dev/null
  one=$(awk '/ecdsa \(nistp256\)/ { printf "%.0f", $(NF-1) }' "$BENCH_DIR/openssl-speed.txt")
  if [ "$one" -gt "$openssl_sign" ]; then openssl_sign=$one; fi
done

python="${GATEHOUSE_ROOT:-.}/.venv/bin/python"
pyjwt=$("$python" - "$seconds" <<'PY'
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
)

row "apple: client secrets minted in-process (1 thread)" "$gatehouse" "tokens/s" ">= 0.80 x openssl" "complete ES256 JWT, raw r||s"
row "apple: openssl speed ecdsap256 sign (1 thread)" "$openssl_sign" "sign/s" "" "same run"
row "apple: PyJWT in-process mint (1 thread)" "$pyjwt" "tokens/s" "" "cryptography backend, same claims"
row "apple: Gatehouse / openssl sign" "$(ratio "$gatehouse" "$openssl_sign")" "ratio" ">= 0.80" ""
row "apple: Gatehouse / PyJWT" "$(ratio "$gatehouse" "$pyjwt")" "ratio" "~1.5" ""
