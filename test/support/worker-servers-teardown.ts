import { stopWorkerServers } from './worker-servers-setup';

/** Jest globalTeardown of the integration, e2e and client projects. */
export default stopWorkerServers;
