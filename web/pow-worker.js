// SPDX-License-Identifier: BSD-3-Clause
// The sale page's proof-of-work solver, run in a Web Worker so that the page stays responsive.
// The message is the token answer's challenge, {prefix, bits} (docs/api.md, docs/tokens.md:
// prefix is the purchase token's 22-character MAC text, bits at most 30); the answer is the
// smallest decimal nonce such that SHA-256(prefix + nonce) starts with `bits` zero bits, as
// common/pow.h checks it. Progress (0-99, the chance of having found it by now) is posted about
// every 4096 tries, then {solution, tries}.
"use strict";
function zeroBits(d, bits) {
	let i = 0;
	for (; bits >= 8; bits -= 8) if (d[i++] !== 0) return false;
	return bits === 0 || d[i] >> (8 - bits) === 0;
}
onmessage = async (m) => {
	const prefix = String(m.data.prefix || "");
	const bits = Math.max(0, Math.min(40, m.data.bits | 0));
	const enc = new TextEncoder();
	const expect = 2 ** bits;
	const BATCH = 256;
	for (let n = 0; ; n += BATCH) {
		const batch = [];
		for (let k = 0; k < BATCH; k++)
			batch.push(crypto.subtle.digest("SHA-256", enc.encode(prefix + (n + k))));
		const digests = await Promise.all(batch);
		for (let k = 0; k < BATCH; k++) {
			if (zeroBits(new Uint8Array(digests[k]), bits)) {
				postMessage({ solution: String(n + k), tries: n + k + 1 });
				return;
			}
		}
		if ((n / BATCH) % 16 === 15)
			postMessage({ progress: Math.min(99, 100 * (1 - Math.exp(-(n + BATCH) / expect))) });
	}
};
