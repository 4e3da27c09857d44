/** The paired gate's test lives with the other exact tests in src/stats/sign-flip.ts. */
export { pairedTest, type PairedItem, type PairedTest } from '../stats/sign-flip.ts';
