// Makes the packages listed in BLOCKED_PACKAGES (comma-separated) unresolvable, as if they were not
// installed, for the rest of the process: `node --import ./test/support/loader/blockPackages.mjs ...`.
import { register } from 'node:module';

const blocked = (process.env.BLOCKED_PACKAGES ?? '').split(',').filter((p) => p !== '');
register('./blockPackagesHooks.mjs', import.meta.url, { data: { blocked } });
