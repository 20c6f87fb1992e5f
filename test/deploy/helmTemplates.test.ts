import { describe, expect, it } from "vitest";
import { manifestTemplates, readTemplate, readValues, templateDocuments, templateFiles, type Values } from "./chart.js";
import { balanceProblems, definedTemplates, includedTemplates, valuesPaths, yamlView } from "./goTemplate.js";

interface Container {
  name: string;
  args?: string[];
  livenessProbe?: { httpGet?: { path: string; port: string } };
  readinessProbe?: { httpGet?: { path: string; port: string } };
  volumeMounts?: { name: string; mountPath: string }[];
  securityContext?: unknown;
}

function deploymentContainer(file: string): Container {
  const deployment = templateDocuments(file).find((doc) => (doc as { kind?: string } | null)?.kind === "Deployment") as
    | { spec: { template: { spec: { containers: Container[] } } } }
    | undefined;
  const container = deployment?.spec.template.spec.containers[0];
  if (container === undefined) throw new Error(`${file} has no Deployment container`);
  return container;
}

describe("Helm chart templates", () => {
  it.each(templateFiles())("%s is balanced Go template", (file) => {
    expect(balanceProblems(readTemplate(file))).toEqual([]);
  });

  it.each(manifestTemplates())("%s parses as YAML documents that are Kubernetes objects", (file) => {
    const documents = templateDocuments(file).filter((doc) => doc !== null);
    expect(documents.length).toBeGreaterThan(0);
    for (const doc of documents as Record<string, unknown>[]) {
      expect(Object.keys(doc)).toEqual(expect.arrayContaining(["apiVersion", "kind", "metadata"]));
      expect((doc.metadata as { name?: unknown }).name, `${file}: ${String(doc.kind)} has a name`).toBeTruthy();
    }
  });

  it("includes only templates the chart defines", () => {
    const defined = new Set(templateFiles().flatMap((file) => definedTemplates(readTemplate(file))));
    const included = templateFiles().flatMap((file) => includedTemplates(readTemplate(file)).map((name) => ({ file, name })));
    expect(included.length).toBeGreaterThan(0);
    expect(included.filter(({ name }) => !defined.has(name))).toEqual([]);
  });

  it("reads only values that values.yaml declares", () => {
    const values = readValues();
    const missing = templateFiles().flatMap((file) =>
      valuesPaths(readTemplate(file))
        .filter((path) => !declared(values, path))
        .map((path) => `${file}: .Values.${path.join(".")}`),
    );
    expect(missing).toEqual([]);
  });

  it("runs the API with `serve`, probed on /healthz and /readyz, on a read-only root with a writable /tmp", () => {
    const api = deploymentContainer("api-deployment.yaml");
    expect(api.args).toEqual(["serve"]);
    expect(api.livenessProbe?.httpGet).toEqual({ path: "/healthz", port: "http" });
    expect(api.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "http" });
    expect(api.volumeMounts).toContainEqual({ name: "tmp", mountPath: "/tmp" });
    expect(api).toHaveProperty("securityContext");
  });

  it("runs the worker with `worker`, its liveness on /healthz of the metrics port, with a writable /tmp", () => {
    const worker = deploymentContainer("worker-deployment.yaml");
    expect(worker.args).toEqual(["worker"]);
    expect(worker.livenessProbe?.httpGet).toEqual({ path: "/healthz", port: "metrics" });
    expect(worker.volumeMounts).toContainEqual({ name: "tmp", mountPath: "/tmp" });
    expect(worker).toHaveProperty("securityContext");
  });

  it("starts the bundled Redis with maxmemory-policy noeviction", () => {
    const statefulSet = templateDocuments("redis.yaml").find((doc) => (doc as { kind?: string }).kind === "StatefulSet") as {
      spec: { template: { spec: { containers: { command: string[] }[] } } };
    };
    const command = statefulSet.spec.template.spec.containers[0]!.command;
    expect(command[command.indexOf("--maxmemory-policy") + 1]).toBe("noeviction");
  });

  it("states in the install notes that Redis must run with noeviction", () => {
    expect(readTemplate("NOTES.txt")).toMatch(/noeviction/);
  });
});

describe("the template checks themselves", () => {
  it("report an if without end, a stray end, an else outside a block and an unclosed action", () => {
    expect(balanceProblems("{{ if .a }}x")).toEqual(['line 1: "if" is never closed by "end"']);
    expect(balanceProblems("x\n{{ end }}")).toEqual(['line 2: "end" without an open block']);
    expect(balanceProblems("{{ else }}")).toEqual(['line 1: "else" outside an if, range or with']);
    expect(balanceProblems("a: {{ .b ")).toEqual(['line 1: "{{" is never closed by "}}"']);
    expect(balanceProblems('{{ include "x" (dict "a" 1 }}')).toEqual(['line 1: unbalanced parentheses in {{ include "x" (dict "a" 1 }}']);
  });

  it("accept braces inside strings, raw strings and comments", () => {
    const text = '{{/* a }} b */}}\n{{- $x := "}}" }}\nd: "{{`{{ $value }}`}}"\n{{ if .a }}{{ else if .b }}{{ end }}';
    expect(balanceProblems(text)).toEqual([]);
    expect(yamlView(text)).toBe('d: "__TPL__"');
  });
});

/** Whether values.yaml declares `path`; free-form maps (empty by default) may hold any key. */
function declared(values: Values, path: readonly string[]): boolean {
  let node: unknown = values;
  for (const key of path) {
    if (node === null || typeof node !== "object" || Array.isArray(node)) return false;
    const record = node as Record<string, unknown>;
    if (!Object.hasOwn(record, key)) return Object.keys(record).length === 0;
    node = record[key];
  }
  return true;
}
