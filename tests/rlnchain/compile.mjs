// Compiles RlnMembership.sol (and the PoseidonT3 library it links) with solc-js from npm.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const solc = require('solc');
const here = fileURLToPath(new URL('.', import.meta.url));

function findImport(path) {
  try {
    return { contents: readFileSync(require.resolve(path), 'utf8') };
  } catch (e) {
    return { error: `${path}: ${e.message}` };
  }
}

/** Returns { poseidon: {abi, bytecode}, membership: {abi, bytecode, linkReferences} }. */
export function compile() {
  const input = {
    language: 'Solidity',
    sources: { 'RlnMembership.sol': { content: readFileSync(`${here}/RlnMembership.sol`, 'utf8') } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'paris', // ganache 7 predates PUSH0 (shanghai)
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.bytecode.linkReferences'] } },
    },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport }));
  const errors = (out.errors || []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const c = (file, name) => out.contracts[file][name];
  const p = c('poseidon-solidity/PoseidonT3.sol', 'PoseidonT3');
  const m = c('RlnMembership.sol', 'RlnMembership');
  return {
    poseidon: { abi: p.abi, bytecode: p.evm.bytecode.object },
    membership: { abi: m.abi, bytecode: m.evm.bytecode.object, linkReferences: m.evm.bytecode.linkReferences },
  };
}

/** Puts the library's address into the bytecode at every place solc left for it. */
export function link(bytecode, linkReferences, address) {
  let code = bytecode;
  for (const file of Object.values(linkReferences))
    for (const refs of Object.values(file))
      for (const { start, length } of refs) {
        const at = start * 2;
        code = code.slice(0, at) + address.slice(2).toLowerCase().padStart(length * 2, '0') + code.slice(at + length * 2);
      }
  return code;
}
