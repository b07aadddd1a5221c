/**
 * The service contract against the S3 adapter on a real server (moto), seen through the
 * extension's method shapes only.
 */
import { extensionShaped } from "../harness/memory_client.ts";
import { startServer } from "../harness/servers.ts";
import { dropInContract } from "./dropin_contract.ts";
import { type ContractTarget, serviceContract } from "./service_contract.ts";

let bucketCount = 0;

const target: ContractTarget = {
  name: "moto through the extension's client shape",
  async client() {
    const server = await startServer("moto");
    const store = await server.bucket(`contract-${++bucketCount}`, { prefix: "swamp" });
    return {
      client: extensionShaped(store),
      keys: async () => (await store.listAllObjects()).map((o) => o.key).sort(),
      close: async () => {
        store.destroy();
        await server.stop();
      },
    };
  },
};

serviceContract(target);
dropInContract(target);
