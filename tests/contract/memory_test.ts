/** The service contract against the in-memory client with the extension's methods. */
import { MemoryClient } from "../harness/memory_client.ts";
import { dropInContract } from "./dropin_contract.ts";
import { type ContractTarget, serviceContract } from "./service_contract.ts";

const target: ContractTarget = {
  name: "an in-memory client",
  client() {
    const client = new MemoryClient();
    return Promise.resolve({
      client,
      keys: () => Promise.resolve([...client.objects.keys()].sort()),
      close: () => Promise.resolve(),
    });
  },
};

serviceContract(target);
dropInContract(target);
