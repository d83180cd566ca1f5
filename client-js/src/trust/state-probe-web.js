// Browser side of the reader-state probe (package.json "#state-probe"). An
// IndexedDB database is there whole or not at all (clearing site data removes
// it, which no page can tell from a first visit), so there is nothing to probe.
/** @returns {Promise<'unknown'>} */
export async function probeState () { return 'unknown' }
