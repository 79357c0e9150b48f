import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { requireCommand } from '../support/prerequisites';

/** The files of deploy/ as the tests read them, and a runner for promtool. */

export const deployDir = resolve(__dirname, '..', '..', 'deploy');
export const dashboardFile = join(deployDir, 'grafana', 'fabric-ops-dashboard.json');
export const rulesFile = join(deployDir, 'prometheus', 'alert-rules.yaml');
export const rulesTestFile = join(deployDir, 'prometheus', 'alert-rules.test.yaml');
export const fleetRulesFile = join(deployDir, 'prometheus', 'fleet-alert-rules.yaml');
export const fleetChannelRulesFile = join(deployDir, 'prometheus', 'fleet-channel-alert-rules.yaml');
export const companionRulesFile = join(deployDir, 'prometheus', 'companion-alert-rules.yaml');
export const companionRulesTestFile = join(deployDir, 'prometheus', 'companion-alert-rules.test.yaml');
export const prometheusConfigFile = join(deployDir, 'prometheus', 'prometheus.yml');

export interface DataSourceRef {
  type?: string;
  uid?: string;
}

export interface DashboardTarget {
  refId: string;
  expr: string;
  legendFormat?: string;
  datasource?: DataSourceRef;
}

export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  datasource?: DataSourceRef;
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: DashboardTarget[];
  panels?: DashboardPanel[];
}

export interface DashboardVariable {
  name: string;
  type: string;
  query: unknown;
  definition?: string;
  datasource?: DataSourceRef;
  allValue?: string;
}

export interface Dashboard {
  title: string;
  uid: string;
  schemaVersion: number;
  templating: { list: DashboardVariable[] };
  panels: DashboardPanel[];
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(dashboardFile, 'utf8')) as Dashboard;
}

/** Every panel, rows' collapsed children included. */
export function allPanels(dashboard: Dashboard): DashboardPanel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

export interface DashboardQuery {
  panel: string;
  refId: string;
  expr: string;
}

export function dashboardQueries(dashboard: Dashboard): DashboardQuery[] {
  return allPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel: `${panel.id} ${panel.title}`, refId: target.refId, expr: target.expr })),
  );
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RulesFile {
  groups: { name: string; rules: AlertRule[] }[];
}

export function readRules(): RulesFile {
  return parse(readFileSync(rulesFile, 'utf8')) as RulesFile;
}

export function readFleetRules(): RulesFile {
  return parse(readFileSync(fleetRulesFile, 'utf8')) as RulesFile;
}

export function readCompanionRules(): RulesFile {
  return parse(readFileSync(companionRulesFile, 'utf8')) as RulesFile;
}

export interface RunResult {
  code: number;
  output: string;
}

/** Runs a command to completion; stdout and stderr together in `output`, never throws on a non-zero exit. */
export function run(command: string, args: string[], cwd?: string): Promise<RunResult> {
  requireCommand(command);
  return new Promise((done, reject) => {
    execFile(command, args, { cwd, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an ExecFileException is an Error (@types/node declares it with Omit<>, which hides that)
      if (error && typeof error.code !== 'number') return reject(error);
      done({ code: error ? Number(error.code) : 0, output });
    });
  });
}
