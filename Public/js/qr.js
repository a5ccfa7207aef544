// A QR code encoder for the console (a TOTP otpauth:// URI shown as a code an authenticator app can scan), drawn as
// SVG with DOM APIs: no library, no canvas, no inline style (the CSP is default-src 'self').
//
// Written from ISO/IEC 18004:2015 (QR Code bar code symbology) as the public descriptions of it explain it: Thonky's
// "QR Code Tutorial" (thonky.com/qr-code-tutorial: data encoding, error correction, structure, masking, format and
// version information) and Project Nayuki's "Creating a QR Code step by step" (the order of the steps). No code was
// copied; the tables below are the standard's (its error correction characteristics of each version and level).
//
// What it does, in the standard's order:
//   1. byte mode (0100) over the text's UTF-8 bytes, no ECI header (authenticator apps read plain bytes);
//   2. the smallest version 1–40 whose data capacity at the chosen level (L, M, Q, H) holds mode, count and data;
//   3. terminator, padding to a byte, pad codewords 0xEC 0x11;
//   4. the data split into blocks, Reed–Solomon codewords per block over GF(256) (x⁸+x⁴+x³+x²+1), interleaved;
//   5. finder, separator, timing and alignment patterns, the dark module, then the codewords in the two-column zigzag;
//   6. each of the eight masks tried, the one with the lowest penalty (rules N1–N4) kept, the first one on a tie;
//   7. format information (level and mask, BCH(15,5), XOR 101010000010010) and, from version 7, version information
//      (BCH(18,6)).

const LEVELS = {
  // formatBits: the two level bits of the format information; index: the column in the tables below.
  L: { formatBits: 0b01, index: 0 },
  M: { formatBits: 0b00, index: 1 },
  Q: { formatBits: 0b11, index: 2 },
  H: { formatBits: 0b10, index: 3 },
};

// Error correction codewords per block, by level (L, M, Q, H) then version 1–40.
const EC_PER_BLOCK = [
  [7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
    28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
  [10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
    26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28],
  [13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
    28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
  [17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
    30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
];

// Error correction blocks, by level (L, M, Q, H) then version 1–40.
const BLOCKS = [
  [1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
    8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25],
  [1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
    17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49],
  [1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
    23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68],
  [1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
    25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81],
];

const MIN_VERSION = 1;
const MAX_VERSION = 40;
const QUIET_ZONE = 4;

/**
 * The modules of a QR code for `text` (byte mode, UTF-8): rows of booleans, true for a dark module, without the quiet
 * zone. `ecc` is the error correction level: "L" (7 %), "M" (15 %), "Q" (25 %) or "H" (30 %). `mask` (0–7) forces a
 * mask pattern instead of the one with the lowest penalty; it is there for tests.
 *
 *   qrMatrix("otpauth://totp/Gatehouse:alice?secret=…")   // → [[true, true, …], …], 45 × 45 (version 7)
 *
 * Throws an Error when the text does not fit version 40 at that level.
 */
export function qrMatrix(text, { ecc = "M", mask } = {}) {
  const level = LEVELS[ecc];
  if (!level) throw new Error(`QR code: unknown error correction level ${JSON.stringify(ecc)} (use L, M, Q or H)`);
  if (mask !== undefined && !(Number.isInteger(mask) && mask >= 0 && mask <= 7)) {
    throw new Error(`QR code: mask must be an integer 0–7, not ${JSON.stringify(mask)}`);
  }
  const data = new TextEncoder().encode(String(text));
  const version = smallestVersion(data.length, level);
  const codewords = addErrorCorrection(encodeData(data, version, level), version, level);

  const grid = new Grid(version);
  grid.drawFunctionPatterns();
  grid.placeCodewords(codewords);

  let chosen = mask;
  if (chosen === undefined) {
    let lowest = Infinity;
    for (let candidate = 0; candidate < 8; candidate += 1) {
      const score = qrPenalty(grid.masked(candidate, level).rows());
      if (score < lowest) [lowest, chosen] = [score, candidate];
    }
  }
  return grid.masked(chosen, level).rows();
}

/**
 * The penalty score of a symbol (rows of booleans) under ISO/IEC 18004's evaluation of masks: N1 runs of five or more
 * modules of one colour in a row or column, N2 2×2 blocks of one colour, N3 the finder-like 1:1:3:1:1 pattern with four
 * light modules before or after it (outside the symbol counts as light, as the quiet zone is), N4 the dark proportion's
 * distance from 50 %. The encoder keeps the mask with the lowest score; exported so tests can check it did.
 */
export function qrPenalty(rows) {
  const size = rows.length;
  const at = (r, c) => rows[r][c];
  let score = 0;
  let dark = 0;
  for (let i = 0; i < size; i += 1) {
    score += linePenalty((k) => at(i, k), size);
    score += linePenalty((k) => at(k, i), size);
  }
  for (let r = 0; r < size; r += 1) {
    for (let c = 0; c < size; c += 1) {
      if (at(r, c)) dark += 1;
      if (r + 1 < size && c + 1 < size) {
        const colour = at(r, c);
        if (at(r, c + 1) === colour && at(r + 1, c) === colour && at(r + 1, c + 1) === colour) score += 3;
      }
    }
  }
  const total = size * size;
  score += 10 * Math.floor(Math.abs(20 * dark - 10 * total) / total);
  return score;
}

/**
 * An <svg> of the QR code for `text`, built with DOM APIs: one <path> of the dark modules and a quiet zone of four
 * modules, `role="img"` with `label` as its accessible name. Its look comes from the `qr` class in console.css
 * (dark modules in the text colour on white, crisp edges). `ecc` as for qrMatrix.
 *
 *   card("Authenticator app", qrSvg(uri, { label: "QR code of the authenticator app's setup key" }))
 */
export function qrSvg(text, { label, ecc = "M" } = {}) {
  if (!label) throw new Error("QR code: give it a label (its accessible name)");
  const rows = qrMatrix(text, { ecc });
  const side = rows.length + 2 * QUIET_ZONE;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${side} ${side}`);
  svg.setAttribute("class", "qr");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", label);
  const background = document.createElementNS(ns, "rect");
  background.setAttribute("class", "qr-light");
  background.setAttribute("width", String(side));
  background.setAttribute("height", String(side));
  background.setAttribute("fill", "#fff"); // the light modules even where console.css is not loaded
  const path = document.createElementNS(ns, "path");
  path.setAttribute("class", "qr-dark");
  path.setAttribute("d", pathData(rows));
  svg.append(background, path);
  return svg;
}

// One subpath per horizontal run of dark modules, offset by the quiet zone: "M4,4h7v1h-7z…".
function pathData(rows) {
  const parts = [];
  rows.forEach((row, r) => {
    for (let c = 0; c < row.length; c += 1) {
      if (!row[c]) continue;
      let end = c;
      while (end + 1 < row.length && row[end + 1]) end += 1;
      const run = end - c + 1;
      parts.push(`M${c + QUIET_ZONE},${r + QUIET_ZONE}h${run}v1h-${run}z`);
      c = end;
    }
  });
  return parts.join("");
}

// --- Capacity -------------------------------------------------------------------------------------------------------

function sizeOf(version) {
  return 17 + 4 * version;
}

// Alignment pattern centres on each axis (the standard's annex E): 6, then evenly spaced by an even step back from
// size − 7; version 32's step is 26 where the rule would give 28.
function alignmentCentres(version) {
  if (version === 1) return [];
  const count = Math.floor(version / 7) + 2;
  const last = sizeOf(version) - 7;
  const step = version === 32 ? 26 : 2 * Math.ceil((last - 6) / (2 * (count - 1)));
  const centres = [6];
  for (let i = count - 2; i >= 0; i -= 1) centres.push(last - i * step);
  return centres;
}

// Modules left for codewords (and remainder bits) once the function patterns and format/version areas are taken.
function dataModules(version) {
  const size = sizeOf(version);
  let taken = 3 * 64 + 2 * 15 + 1 + 2 * (size - 16); // finders with separators, format twice, dark module, timing
  if (version >= 2) {
    const n = Math.floor(version / 7) + 2;
    taken += 25 * (n * n - 3) - 2 * 5 * (n - 2); // alignment patterns, less what they share with the timing lines
  }
  if (version >= 7) taken += 2 * 18;
  return size * size - taken;
}

function totalCodewords(version) {
  return Math.floor(dataModules(version) / 8);
}

function dataCodewords(version, level) {
  const v = version - 1;
  return totalCodewords(version) - EC_PER_BLOCK[level.index][v] * BLOCKS[level.index][v];
}

function countBits(version) {
  return version <= 9 ? 8 : 16;
}

function smallestVersion(byteCount, level) {
  for (let version = MIN_VERSION; version <= MAX_VERSION; version += 1) {
    if (4 + countBits(version) + 8 * byteCount <= 8 * dataCodewords(version, level)) return version;
  }
  const most = Math.floor((8 * dataCodewords(MAX_VERSION, level) - 4 - countBits(MAX_VERSION)) / 8);
  const ecc = Object.keys(LEVELS).find((key) => LEVELS[key] === level);
  throw new Error(`QR code: ${byteCount} bytes do not fit; version 40 at level ${ecc} holds at most ${most} bytes`);
}

// --- Data and error correction --------------------------------------------------------------------------------------

function encodeData(bytes, version, level) {
  const capacity = dataCodewords(version, level);
  const bits = [];
  const put = (value, length) => {
    for (let i = length - 1; i >= 0; i -= 1) bits.push((value >>> i) & 1);
  };
  put(0b0100, 4);
  put(bytes.length, countBits(version));
  for (const byte of bytes) put(byte, 8);
  put(0, Math.min(4, 8 * capacity - bits.length));
  while (bits.length % 8 !== 0) bits.push(0);

  const codewords = [];
  for (let i = 0; i < bits.length; i += 8) {
    let byte = 0;
    for (let k = 0; k < 8; k += 1) byte = (byte << 1) | bits[i + k];
    codewords.push(byte);
  }
  for (let pad = 0; codewords.length < capacity; pad ^= 1) codewords.push(pad === 0 ? 0xec : 0x11);
  return codewords;
}

// GF(256) with the standard's polynomial x⁸ + x⁴ + x³ + x² + 1: log and antilog tables.
const EXP = new Uint8Array(512);
const LOG = new Uint8Array(256);
{
  let x = 1;
  for (let i = 0; i < 255; i += 1) {
    EXP[i] = x;
    LOG[x] = i;
    x <<= 1;
    if (x & 0x100) x ^= 0x11d;
  }
  for (let i = 255; i < 512; i += 1) EXP[i] = EXP[i - 255];
}

function multiply(a, b) {
  return a === 0 || b === 0 ? 0 : EXP[LOG[a] + LOG[b]];
}

// The generator (x − α⁰)(x − α¹)…(x − α^(degree−1)), coefficients from the highest power down, the leading 1 left out.
const generators = new Map();
function generator(degree) {
  if (generators.has(degree)) return generators.get(degree);
  let poly = [1];
  for (let i = 0; i < degree; i += 1) {
    const next = new Array(poly.length + 1).fill(0);
    for (let k = 0; k < poly.length; k += 1) {
      next[k] ^= poly[k];
      next[k + 1] ^= multiply(poly[k], EXP[i]);
    }
    poly = next;
  }
  const result = poly.slice(1);
  generators.set(degree, result);
  return result;
}

// The remainder of data(x)·x^degree divided by the generator: the block's error correction codewords.
function reedSolomon(data, degree) {
  const gen = generator(degree);
  const remainder = new Array(degree).fill(0);
  for (const byte of data) {
    const factor = byte ^ remainder.shift();
    remainder.push(0);
    for (let k = 0; k < degree; k += 1) remainder[k] ^= multiply(gen[k], factor);
  }
  return remainder;
}

// Splits the data codewords into blocks (the shorter ones first), adds each block's error correction codewords, and
// interleaves: the data codewords column by column across the blocks, then the error correction codewords likewise.
function addErrorCorrection(data, version, level) {
  const v = version - 1;
  const blockCount = BLOCKS[level.index][v];
  const ecLength = EC_PER_BLOCK[level.index][v];
  const shortLength = Math.floor(data.length / blockCount);
  const longBlocks = data.length % blockCount;
  const blocks = [];
  let offset = 0;
  for (let b = 0; b < blockCount; b += 1) {
    const length = shortLength + (b >= blockCount - longBlocks ? 1 : 0);
    const part = data.slice(offset, offset + length);
    offset += length;
    blocks.push({ data: part, ec: reedSolomon(part, ecLength) });
  }
  const out = [];
  for (let i = 0; i <= shortLength; i += 1) {
    for (const block of blocks) if (i < block.data.length) out.push(block.data[i]);
  }
  for (let i = 0; i < ecLength; i += 1) {
    for (const block of blocks) out.push(block.ec[i]);
  }
  return out;
}

// --- The symbol -----------------------------------------------------------------------------------------------------

// The standard's eight mask conditions: a data module at row r, column c is inverted where true.
const MASKS = [
  (r, c) => (r + c) % 2 === 0,
  (r) => r % 2 === 0,
  (r, c) => c % 3 === 0,
  (r, c) => (r + c) % 3 === 0,
  (r, c) => (Math.floor(r / 2) + Math.floor(c / 3)) % 2 === 0,
  (r, c) => ((r * c) % 2) + ((r * c) % 3) === 0,
  (r, c) => (((r * c) % 2) + ((r * c) % 3)) % 2 === 0,
  (r, c) => (((r + c) % 2) + ((r * c) % 3)) % 2 === 0,
];

class Grid {
  constructor(version) {
    this.version = version;
    this.size = sizeOf(version);
    this.dark = new Uint8Array(this.size * this.size);
    this.reserved = new Uint8Array(this.size * this.size); // function patterns, format and version areas
  }

  set(r, c, dark) {
    this.dark[r * this.size + c] = dark ? 1 : 0;
    this.reserved[r * this.size + c] = 1;
  }

  drawFunctionPatterns() {
    const { size } = this;
    // Timing lines first: the finders and alignment patterns drawn after them overwrite their ends.
    for (let i = 0; i < size; i += 1) {
      this.set(6, i, i % 2 === 0);
      this.set(i, 6, i % 2 === 0);
    }
    this.finder(0, 0);
    this.finder(0, size - 7);
    this.finder(size - 7, 0);
    const centres = alignmentCentres(this.version);
    for (const r of centres) {
      for (const c of centres) {
        const nearFinder = (r === 6 && c === 6) || (r === 6 && c === size - 7) || (r === size - 7 && c === 6);
        if (!nearFinder) this.alignment(r, c);
      }
    }
    // Format and version areas are reserved now and written once the mask is known.
    this.writeFormat(0);
    this.writeVersion();
  }

  // A 7×7 finder at (top, left) with its one-module light separator, clipped to the symbol.
  finder(top, left) {
    for (let dr = -1; dr <= 7; dr += 1) {
      for (let dc = -1; dc <= 7; dc += 1) {
        const r = top + dr;
        const c = left + dc;
        if (r < 0 || c < 0 || r >= this.size || c >= this.size) continue;
        const ring = Math.max(Math.abs(dr - 3), Math.abs(dc - 3)); // 0 centre … 3 outer ring, 4 separator
        this.set(r, c, ring !== 2 && ring !== 4);
      }
    }
  }

  alignment(centreRow, centreColumn) {
    for (let dr = -2; dr <= 2; dr += 1) {
      for (let dc = -2; dc <= 2; dc += 1) {
        this.set(centreRow + dr, centreColumn + dc, Math.max(Math.abs(dr), Math.abs(dc)) !== 1);
      }
    }
  }

  // Format information: 2 level bits and 3 mask bits, 10 BCH bits (generator x¹⁰+x⁸+x⁵+x⁴+x²+x+1), XOR 0x5412.
  // Bit 14 is the most significant; the two copies go around the top-left finder, and split between the bottom-left
  // and top-right ones, with the dark module above the bottom-left copy.
  writeFormat(bits) {
    const { size } = this;
    const bit = (i) => ((bits >>> i) & 1) === 1;
    for (let i = 0; i <= 5; i += 1) this.set(i, 8, bit(i));
    this.set(7, 8, bit(6));
    this.set(8, 8, bit(7));
    this.set(8, 7, bit(8));
    for (let i = 9; i <= 14; i += 1) this.set(8, 14 - i, bit(i));
    for (let i = 0; i <= 7; i += 1) this.set(8, size - 1 - i, bit(i));
    for (let i = 8; i <= 14; i += 1) this.set(size - 15 + i, 8, bit(i));
    this.set(size - 8, 8, true);
  }

  // Version information from version 7: 6 version bits and 12 BCH bits (generator x¹²+x¹¹+x¹⁰+x⁹+x⁸+x⁵+x²+1), in a
  // 6×3 block left of the top-right finder and its transpose above the bottom-left one, bit 0 first.
  writeVersion() {
    if (this.version < 7) return;
    const bits = (this.version << 12) | bchRemainder(this.version, 0x1f25, 12);
    for (let i = 0; i < 18; i += 1) {
      const dark = ((bits >>> i) & 1) === 1;
      const a = Math.floor(i / 3);
      const b = this.size - 11 + (i % 3);
      this.set(a, b, dark);
      this.set(b, a, dark);
    }
  }

  // The codewords, most significant bit first, in two-column strips from the right edge, upwards then downwards in
  // turn, each strip read right module before left, skipping reserved modules and the vertical timing column.
  // Modules left over (the remainder bits) stay light.
  placeCodewords(codewords) {
    const { size } = this;
    const totalBits = codewords.length * 8;
    let index = 0;
    let upwards = true;
    for (let right = size - 1; right >= 1; right -= 2) {
      if (right === 6) right = 5;
      for (let step = 0; step < size; step += 1) {
        const r = upwards ? size - 1 - step : step;
        for (const c of [right, right - 1]) {
          if (this.reserved[r * size + c]) continue;
          if (index < totalBits) {
            this.dark[r * size + c] = (codewords[index >>> 3] >>> (7 - (index & 7))) & 1;
          }
          index += 1;
        }
      }
      upwards = !upwards;
    }
  }

  // A copy with the mask applied to the data modules and the format information written for it.
  masked(mask, level) {
    const copy = new Grid(this.version);
    copy.dark.set(this.dark);
    copy.reserved.set(this.reserved);
    const condition = MASKS[mask];
    for (let r = 0; r < this.size; r += 1) {
      for (let c = 0; c < this.size; c += 1) {
        const i = r * this.size + c;
        if (!copy.reserved[i] && condition(r, c)) copy.dark[i] ^= 1;
      }
    }
    const data = (level.formatBits << 3) | mask;
    copy.writeFormat(((data << 10) | bchRemainder(data, 0x537, 10)) ^ 0x5412);
    return copy;
  }

  rows() {
    const out = [];
    for (let r = 0; r < this.size; r += 1) {
      out.push(Array.from(this.dark.subarray(r * this.size, (r + 1) * this.size), (v) => v === 1));
    }
    return out;
  }
}

// The remainder of value·x^degree divided by the generator polynomial `poly` (degree `degree`) over GF(2).
function bchRemainder(value, poly, degree) {
  let rem = value << degree;
  for (let bit = 31 - Math.clz32(rem); bit >= degree; bit -= 1) {
    if ((rem >>> bit) & 1) rem ^= poly << (bit - degree);
  }
  return rem;
}

// N1 (runs of five or more of one colour: 3, plus 1 for each module past five) and N3 (1:1:3:1:1 with four light
// modules on either side: 40 each) along one row or column; `at(k)` is its k-th module.
function linePenalty(at, size) {
  let score = 0;
  let run = 1;
  for (let k = 1; k <= size; k += 1) {
    if (k < size && at(k) === at(k - 1)) {
      run += 1;
    } else {
      if (run >= 5) score += 3 + (run - 5);
      run = 1;
    }
  }
  const lightAt = (k) => k < 0 || k >= size || !at(k);
  const lightSpan = (from) => lightAt(from) && lightAt(from + 1) && lightAt(from + 2) && lightAt(from + 3);
  for (let k = 0; k + 7 <= size; k += 1) {
    const finderLike = at(k) && !at(k + 1) && at(k + 2) && at(k + 3) && at(k + 4) && !at(k + 5) && at(k + 6);
    if (finderLike && (lightSpan(k - 4) || lightSpan(k + 7))) score += 40;
  }
  return score;
}
