// rotree-client/trust: every decision about whether bytes are trusted
// (docs/TRUST.md): the pure rules (verify.js, roles.js), the reader's state
// (state.js), the trust chain and the root store that apply them to what the
// mirrors serve, and the address the user typed.
export {
  DEFAULT_SKEW_MS, verifyFsinfo, verifyFsinfoSignature, verifyHistoryEntry, checkFileHash, FileHashVerdicts, fileHashImplied,
  checkFreshness, isExpired, checkRollback, storedSizeOf, verifyBlob, verifyDecoded, verifyChunk, verifyDirPage, verifyChunkIndex,
  checkChunkIndexPlacement, checkPagePlacement, checkLeadRef, VERIFIERS, dirExpectation, childPageExpectation, localChunkFault, compareRoots,
  rankRoots, hasFork, staleMirrors
} from './verify.js'
export {
  MAX_TRUST_STEPS, parseFragment, anchorText, trustAnchorOf, trustHash, validSigners, requireThreshold, acceptTrustStep, walkTrust,
  singleKeyRoles, checkAddress, checkLoneKey, checkNotRetired, sameTrustDocument, checkNamedTrust, verifyFsinfoV2, countSigners,
  verifyHistoryEntryV2, advanceState
} from './roles.js'
export { parseAddress, mirrorUrl } from './address.js'
export { checkRecord, SeqStore } from './state.js'
// where a reader keeps its state by default ($ROTREE_STATE, $XDG_STATE_HOME/rotree, ~/.local/state/rotree)
export { defaultStateDir, stateLocation } from '#state-dir'
export { walkChain, mirrorTrustSource, probeTrustSource, firstTrustSource, TrustChain } from './trust-chain.js'
export { RootStore, rootRecordV2, openPrivateRecord, infoOf } from './root-store.js'
