#!/usr/bin/env node
// Generates js-strings.json: what JavaScript itself answers for String.prototype.toLowerCase and ===,
// the two operations Better Auth 1.7.1 uses on emails (oauth2/link-account.ts handleOAuthUserInfo,
// api/routes/account.ts linkSocialAccount, api/routes/callback.ts callbackOAuth).
//
// Run once with Debian's nodejs and check the output in:
//   node Tests/Fixtures/js-strings/generate.js > Tests/Fixtures/js-strings/js-strings.json
// Gatehouse's JavaScriptString is tested against this file (JavaScriptStringTests).
"use strict";

const units = (s) => Array.from({ length: s.length }, (_, i) => s.charCodeAt(i));

// Every code point whose toLowerCase (alone) is not itself.
const mappings = [];
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const s = String.fromCodePoint(cp);
  const lower = s.toLowerCase();
  if (lower !== s) mappings.push([cp, units(lower)]);
}

// Strings whose lowercasing depends on context (final sigma) or on more than one code point.
const strings = [
  "ΟΔΟΣ@example.gr", "ΟΔΟΣ", "Σ", "ΣΑΣ", "ΑΣΣ", "ΑΣ.Β", "ΑΣ'", "Α'Σ", "ΑΣ\u0301", "ΑΣ\u0301Β", "ΜΑΪΟΣ ΣΑΒΒΑΤΟ",
  "aΣ", "1Σ", "Σ1", "ΑΣ\u00ad", "ΑΣ\u00adΒ", "\u0130STANBUL", "I\u0307", "DİYARBAKIR", "ıi", "STRASSE", "Straße", "\u1E9E",
  "\uFF21\uFF4E\uFF41@\uFF47\uFF4D\uFF41\uFF49\uFF4C.com", "\u212Aate@example.com", "\u212Bngstr\u00F6m", "Jos\u00E9@Example.com",
  "Jose\u0301@Example.com", "\u13A0\u13A1", "\u{10400}\u{10401}", "ǅ", "ǈǋ", "ANA.COSTA+NEWS@GMAIL.COM", "😀@Ex.com",
];
const lowered = strings.map((s) => ({ input: units(s), lower: units(s.toLowerCase()) }));

// Pairs: is a.toLowerCase() === b.toLowerCase()? (the email comparison Better Auth makes)
const pairs = [
  ["jos\u00E9@example.com", "jose\u0301@example.com"],
  ["Jos\u00E9@Example.com", "jos\u00E9@example.com"],
  ["ΟΔΟΣ@example.gr", "οδος@example.gr"],
  ["ΟΔΟΣ@example.gr", "οδοσ@example.gr"],
  ["ΟΔΟΣ@example.gr", "οδος@EXAMPLE.GR"],
  ["\u0130nci@example.com", "inci@example.com"],
  ["\u0130nci@example.com", "i\u0307nci@example.com"],
  ["Inci@example.com", "\u0131nci@example.com"],
  ["Inci@example.com", "inci@example.com"],
  ["STRASSE@example.de", "stra\u00DFe@example.de"],
  ["\u1E9E@example.de", "\u00DF@example.de"],
  ["\uFF21na@example.com", "ana@example.com"],
  ["\uFF21na@example.com", "\uFF41na@example.com"],
  ["\u212Aate@example.com", "kate@example.com"],
  ["\u212Bsa@example.com", "\u00E5sa@example.com"],
  ["\u212Bsa@example.com", "a\u030Asa@example.com"],
  ["Ben@Gmail.com", "ben@gmail.com"],
  ["ben@gmail.com", "ben@gmail.com "],
  ["\uFB01@example.com", "fi@example.com"],
  ["\u{10400}@example.com", "\u{10428}@example.com"],
];
const comparisons = pairs.map(([a, b]) => ({ a: units(a), b: units(b), equal: a.toLowerCase() === b.toLowerCase() }));

process.stdout.write(JSON.stringify({
  generator: "Tests/Fixtures/js-strings/generate.js",
  node: process.version,
  unicode: process.versions.unicode,
  icu: process.versions.icu,
  mappings,
  lowered,
  comparisons,
}) + "\n");
