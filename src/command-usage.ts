/**
 * `fabric-ops --help`. Apart from src/command.ts (which runs the command when loaded) so that
 * scripts/gendocs.ts can write it into docs/reference/command.md, where a test holds it equal.
 */
export const commandUsage = `Usage: fabric-ops [--config FILE] [--dialect peer|orderer] [--fleet-config FILE]
       fabric-ops fleet COMMAND ...   (fabric-ops fleet --help)

Runs the operations service of a Hyperledger Fabric peer or orderer: /logspec, /healthz,
/metrics and /version, with mutual TLS as the node's configuration says.

Options:
  -c, --config FILE      core.yaml (peer) or orderer.yaml (orderer); the dialect is
                         detected from the file's top-level keys
  -d, --dialect DIALECT  peer or orderer: force the dialect, or pick the file in
                         $FABRIC_CFG_PATH (core.yaml / orderer.yaml)
      --fleet-config FILE  fleet mode: also serve /fleet/* for the nodes this file lists
                         (or FABRIC_OPS_FLEET_CONFIG; docs/fleet.md)
  -k, --list-keys        list every configuration key read in the dialect (default
                         peer), with its environment variable and default
  -h, --help             show this help
  -v, --version          show the version

Without --config, $FABRIC_CFG_PATH/core.yaml or orderer.yaml is read; without either,
the embedded defaults of Fabric's sample core.yaml (or orderer.yaml with --dialect orderer).
Environment overrides use Fabric's names: CORE_OPERATIONS_LISTENADDRESS, ORDERER_METRICS_PROVIDER, ...
FABRIC_LOGGING_SPEC sets the initial logging specification, FABRIC_LOGGING_FORMAT=json gives JSON lines.
Beside one peer or orderer, reporting its certificates, disk and health and holding its log
level: CORE_OPERATIONS_COMPANION_ENABLED=true (orderer: ORDERER_...; docs/companion.md).

Exit status: 0 after a clean stop (SIGTERM, SIGINT), 1 when the server cannot run
(address in use), 2 for a configuration error.

More, in the fabric-ops sources: docs/README.md (every guide), docs/reference/command.md
(options, variables, signals), docs/reference/configuration.md (every key),
docs/troubleshooting.md (the messages and what to do).
`;
