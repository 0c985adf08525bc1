// Every network the gateway knows, in the network registry's order (chains/registry.ts): the console's network
// choices and filters. Which of them this deployment runs is GET /api/networks (networks.ts).
export { NETWORK_IDS } from '../../../chains/vocabulary.js';
