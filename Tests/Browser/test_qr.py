"""Public/js/qr.js, the console's QR code encoder, held to implementations that are not its own.

The module runs under node (imported by path, as the browser imports it); its matrices are drawn with Pillow and read
back by zxing-cpp, a real decoder, which must return the very bytes that went in. At every version boundary of every
level the version chosen is checked against the capacities python-qrcode derives from its own copy of the standard's
tables, and the modules against python-qrcode's for the same version and mask. The last test draws qrSvg() in Chromium
on the console's own origin (its CSP, its console.css) at 390 px wide and decodes a screenshot of it.
"""
import json
import pathlib
import random
import subprocess

import pytest
import qrcode
import qrcode.base
import qrcode.util
import zxingcpp
from PIL import Image
from selenium.webdriver.common.by import By

ROOT = pathlib.Path(__file__).resolve().parents[2]
QR_JS = ROOT / "Public/js/qr.js"
LEVELS = "LMQH"
QRCODE_LEVELS = {"L": qrcode.constants.ERROR_CORRECT_L, "M": qrcode.constants.ERROR_CORRECT_M,
                 "Q": qrcode.constants.ERROR_CORRECT_Q, "H": qrcode.constants.ERROR_CORRECT_H}
OTPAUTH = ("otpauth://totp/Gatehouse:alice?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
           "&issuer=Gatehouse&algorithm=SHA1&digits=6&period=30")

# Reads a JSON list of requests on stdin, answers a JSON list: a matrix as rows of "0"/"1", or the error's message.
RUNNER = """
import { qrMatrix, qrPenalty } from %s;
let input = "";
for await (const chunk of process.stdin) input += chunk;
const text = (rows) => rows.map((row) => row.map((dark) => (dark ? "1" : "0")).join(""));
const answers = JSON.parse(input).map((request) => {
  try {
    if (request.op === "penalty") return { penalty: qrPenalty(request.rows.map((row) => [...row].map((c) => c === "1"))) };
    const options = request.ecc === undefined ? undefined : { ecc: request.ecc, mask: request.mask ?? undefined };
    if (request.op === "masks") {
      const forced = [0, 1, 2, 3, 4, 5, 6, 7].map((mask) => qrMatrix(request.text, { ...options, mask }));
      return { rows: text(qrMatrix(request.text, options)), forced: forced.map(text), penalties: forced.map(qrPenalty) };
    }
    return { rows: text(qrMatrix(request.text, options)) };
  } catch (error) {
    return { error: `${error.name}: ${error.message}` };
  }
});
process.stdout.write(JSON.stringify(answers));
""" % json.dumps(QR_JS.as_uri())


def run_node(requests):
    result = subprocess.run(["node", "--input-type=module", "-e", RUNNER], input=json.dumps(requests),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def encode(texts, ecc="M", mask=None):
    answers = run_node([{"text": t, "ecc": ecc, "mask": mask} for t in texts])
    for text, answer in zip(texts, answers):
        assert "error" not in answer, f"{len(text.encode())} bytes at {ecc}: {answer['error']}"
    return [answer["rows"] for answer in answers]


def version_of(rows):
    assert len(rows) == len(rows[0]) and (len(rows) - 17) % 4 == 0, "not a QR code's size"
    return (len(rows) - 17) // 4


def image(rows, scale=3, quiet=4):
    """The matrix as a grey image: `scale` pixels a module, a light quiet zone of `quiet` modules."""
    side = (len(rows) + 2 * quiet) * scale
    light = b"\xff" * (quiet * scale)
    lines = []
    for row in rows:
        line = light + b"".join((b"\x00" if c == "1" else b"\xff") * scale for c in row) + light
        lines.extend([line] * scale)
    blank = b"\xff" * side
    return Image.frombytes("L", (side, side), blank * (quiet * scale) + b"".join(lines) + blank * (quiet * scale))


def decoded(picture):
    """The one QR code zxing-cpp reads in the picture: (its bytes, its text, its level)."""
    found = zxingcpp.read_barcodes(picture, formats=zxingcpp.BarcodeFormat.QRCode)
    assert len(found) == 1, f"zxing-cpp read {len(found)} QR codes"
    return found[0].bytes, found[0].text, found[0].ec_level


def byte_capacity(version, ecc):
    """Bytes that fit in byte mode, from python-qrcode's table of blocks (not from qr.js)."""
    data = sum(block.data_count for block in qrcode.base.rs_blocks(version, QRCODE_LEVELS[ecc]))
    return (8 * data - 4 - (8 if version <= 9 else 16)) // 8


URI_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?&=%"


def printable(count, seed):
    """`count` characters of a URI, the same for the same seed."""
    rng = random.Random(seed)
    return "".join(rng.choice(URI_CHARACTERS) for _ in range(count))


def qrcode_rows(text, version, ecc, mask):
    """python-qrcode's modules for the same bytes, version, level and mask."""
    code = qrcode.QRCode(version=version, error_correction=QRCODE_LEVELS[ecc], border=0, mask_pattern=mask)
    code.add_data(qrcode.util.QRData(text.encode(), mode=qrcode.util.MODE_8BIT_BYTE))
    code.make(fit=False)
    return ["".join("1" if dark else "0" for dark in row) for row in code.get_matrix()]


@pytest.mark.parametrize("ecc", LEVELS)
def test_every_version_boundary_decodes(ecc):
    """The fullest text of each version picks that version, one byte more the next; zxing-cpp reads each back."""
    texts, expected = [], []
    for version in range(1, 41):
        capacity = byte_capacity(version, ecc)
        texts.append(printable(capacity, seed=version))
        expected.append(version)
        if version < 40:
            texts.append(printable(capacity + 1, seed=100 + version))
            expected.append(version + 1)
    for text, version, rows in zip(texts, expected, encode(texts, ecc)):
        assert version_of(rows) == version, f"{len(text)} bytes at {ecc}"
        data, read, level = decoded(image(rows))
        assert data == text.encode() and read == text, f"{len(text)} bytes at {ecc} (version {version})"
        assert level == ecc


@pytest.mark.parametrize("ecc", LEVELS)
def test_same_modules_as_python_qrcode(ecc):
    """With the mask fixed, every version's modules equal python-qrcode's: an implementation written apart from it."""
    cases = [(version, printable(byte_capacity(version, ecc) - version % 3, seed=200 + version), version % 8)
             for version in range(1, 41)]
    answers = run_node([{"text": text, "ecc": ecc, "mask": mask} for _, text, mask in cases])
    for (version, text, mask), answer in zip(cases, answers):
        assert answer["rows"] == qrcode_rows(text, version, ecc, mask), f"version {version}, mask {mask}"


@pytest.mark.parametrize("text", [
    OTPAUTH,
    "x",
    "Grüße aus Zürich — 東京 — Ελληνικά — 🙂 otpauth://totp/Gatehouse:zoë",
    printable(2000, seed=1),
], ids=["otpauth", "one-byte", "non-ascii", "2000-bytes"])
def test_decodes_to_the_same_bytes(text):
    (rows,) = encode([text])
    data, read, _ = decoded(image(rows))
    assert data == text.encode()
    assert read == text


def test_otpauth_uri_at_every_level():
    for ecc in LEVELS:
        (rows,) = encode([OTPAUTH], ecc)
        assert decoded(image(rows)) == (OTPAUTH.encode(), OTPAUTH, ecc)


@pytest.mark.parametrize("ecc", LEVELS)
def test_too_long_throws(ecc):
    most = byte_capacity(40, ecc)
    fits, too_long, too_many_bytes = run_node([
        {"text": "a" * most, "ecc": ecc},
        {"text": "a" * (most + 1), "ecc": ecc},
        {"text": "é" * (most // 2 + 1), "ecc": ecc},  # two UTF-8 bytes each: bytes are counted, not characters
    ])
    assert "rows" in fits and version_of(fits["rows"]) == 40
    for answer, count in ((too_long, most + 1), (too_many_bytes, 2 * (most // 2 + 1))):
        assert answer.get("error") == (f"Error: QR code: {count} bytes do not fit; version 40 at level {ecc} "
                                       f"holds at most {most} bytes")


def test_refuses_unknown_options():
    level, mask = run_node([{"text": "a", "ecc": "X"}, {"text": "a", "ecc": "M", "mask": 8}])
    assert level["error"] == 'Error: QR code: unknown error correction level "X" (use L, M, Q or H)'
    assert mask["error"] == "Error: QR code: mask must be an integer 0–7, not 8"


def test_deterministic():
    texts = [OTPAUTH, printable(700, seed=3), "Ελληνικά"]
    first = encode(texts)
    assert encode(texts) == first  # another node process
    assert encode(texts + texts)[len(texts):] == first  # the same process, after other work


def test_chosen_mask_has_the_lowest_penalty():
    """The lowest of the eight penalties, the first mask on a tie (t28 at Q, t30 at M and t79 at H have two each)."""
    cases = [(OTPAUTH, "M"), ("x", "L"), (printable(60, seed=4), "Q"), (printable(300, seed=5), "H"),
             (printable(1000, seed=6), "M"), ("Grüße", "M"), ("t28", "Q"), ("t30", "M"), ("t79", "H")]
    cases += [(printable(n, seed=n), "M") for n in range(5, 400, 37)]
    ties = 0
    for (text, ecc), answer in zip(cases, run_node([{"op": "masks", "text": t, "ecc": e} for t, e in cases])):
        lowest = min(answer["penalties"])
        ties += answer["penalties"].count(lowest) > 1
        assert answer["rows"] == answer["forced"][answer["penalties"].index(lowest)], f"{len(text)} bytes at {ecc}"
        assert len(set(map(tuple, answer["forced"]))) == 8, "the eight masks gave fewer than eight symbols"
    assert ties >= 3


def test_penalty_rules_on_known_matrices():
    size = 21
    dark = ["1" * size] * size
    # N1: 42 lines, each a run of 21 (3 + 16); N2: 20 × 20 blocks of 3; N4: 100 % dark is 10 steps of 5 % from 50 %.
    all_dark = 42 * 19 + 400 * 3 + 100
    # A checkerboard has no run, no block, no finder-like pattern, and 221 of 441 modules dark (50.1 %: no step).
    checker = ["".join("1" if (r + c) % 2 == 0 else "0" for c in range(size)) for r in range(size)]
    # Light but for one finder-like row, 0000 1011101 0000000000, dark at columns 4, 6, 7, 8 and 10:
    # N1 rows: 20 light rows (3 + 16 each) and row 10's final run of 10 (3 + 5); columns: 16 light columns (19 each)
    # and 5 with 10 light, 1 dark, 10 light (8 + 8): 380 + 8 + 304 + 80 = 772.
    # N2: 360 blocks away from row 10, and 2 × 12 beside its 12 pairs of light neighbours: 384 × 3 = 1152.
    # N3: once, in row 10: 40. N4: 5 dark of 441 is 1.1 %, 9 whole steps of 5 % from 50 %: 90.
    finder_row = ["0" * size] * size
    finder_row[10] = "0000" + "1011101" + "0" * 10
    answers = run_node([{"op": "penalty", "rows": rows} for rows in (dark, checker, finder_row)])
    assert [answer["penalty"] for answer in answers] == [all_dark, 0, 772 + 1152 + 40 + 90]


def test_encode_time_of_an_otpauth_uri():
    """Informative: how long one otpauth URI takes in node (printed with -s; asserted only to be sane)."""
    script = RUNNER.split("let input")[0] + """
const uri = %s;
qrMatrix(uri);
const start = performance.now();
for (let i = 0; i < 50; i += 1) qrMatrix(uri);
process.stdout.write(String((performance.now() - start) / 50));
""" % json.dumps(OTPAUTH)
    result = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    milliseconds = float(result.stdout)
    print(f"qrMatrix(otpauth URI, {len(OTPAUTH)} bytes): {milliseconds:.2f} ms")
    assert milliseconds < 1000



def test_qr_svg_in_the_console(browser, console):
    """qrSvg() on the console's origin: its CSP and console.css, 390 px wide; a screenshot of it decodes."""
    browser.get(console.url)
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 390, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    failure = browser.execute_async_script("""
        const [uri, done] = arguments;
        import("/js/qr.js").then(({ qrSvg }) => {
          const svg = qrSvg(uri, { label: "QR code of the authenticator setup key" });
          svg.id = "qr-under-test";
          document.body.append(svg);
          done(null);
        }, (error) => done(String(error)));
    """, OTPAUTH)
    assert failure is None
    try:
        svg = browser.find_element(By.ID, "qr-under-test")
        facts = browser.execute_script("""
            const svg = arguments[0];
            const path = svg.querySelector("path");
            const box = svg.getBoundingClientRect();
            return {
              role: svg.getAttribute("role"), label: svg.getAttribute("aria-label"), viewBox: svg.getAttribute("viewBox"),
              styled: svg.querySelectorAll("[style]").length + (svg.hasAttribute("style") ? 1 : 0),
              paths: svg.querySelectorAll("path").length, fill: getComputedStyle(path).fill,
              edges: getComputedStyle(svg).shapeRendering, width: box.width, height: box.height,
              pageWidth: document.documentElement.scrollWidth,
            };
        """, svg)
        (rows,) = encode([OTPAUTH])
        side = len(rows) + 8
        assert facts["role"] == "img" and facts["label"] == "QR code of the authenticator setup key"
        assert facts["viewBox"] == f"0 0 {side} {side}" and facts["paths"] == 1 and facts["styled"] == 0
        assert facts["fill"] == "rgb(27, 33, 48)" and facts["edges"] == "crispedges"  # --ink
        assert facts["width"] == facts["height"] and side * 4 <= facts["width"] <= 390 and facts["pageWidth"] <= 390
        picture = ROOT / ".build/screenshots/qr-otpauth-390.png"
        picture.parent.mkdir(parents=True, exist_ok=True)
        picture.write_bytes(svg.screenshot_as_png)
        assert decoded(Image.open(picture)) == (OTPAUTH.encode(), OTPAUTH, "M")
        refused = [entry["message"] for entry in browser.get_log("browser") if "Content Security Policy" in entry["message"]]
        assert refused == []
    finally:
        browser.execute_script("document.getElementById('qr-under-test')?.remove()")
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
