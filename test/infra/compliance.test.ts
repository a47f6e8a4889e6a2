import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type App, CfnResource, Stack, Validations } from 'aws-cdk-lib'
import type { ITable } from 'aws-cdk-lib/aws-dynamodb'
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam'
import nag from 'cdk-nag'
import { afterAll, describe, expect, it } from 'vitest'
import { ApiStack } from '../../infra/api-stack.js'
import { DataStack } from '../../infra/data-stack.js'
import { testApp } from '../support/cdk.js'

type Violation = { ruleName: string; severity: string; violatingConstructs?: { constructPath: string }[] }
type Report = { pluginReports: { pluginName: string; violations: Violation[] }[] }

const outdirs: string[] = []
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true })
})

const CFN_VALIDATE = 'CloudFormation Validate'

/**
 * Synthesises what `build` adds and returns the validation report: with the AwsSolutions pack as `infra/app.ts`
 * registers it (`nag`), and with the CDK's built-in CloudFormation validation (`cfn`: the resource schemas and rules
 * `cdk synth` and `cdk deploy` check). The suite turns that validation off (`CDK_VALIDATION=false` in
 * vitest.config.ts: it costs about 10 s of CPU per synth), so these cases are where it runs.
 */
function validationReport(build: (app: App) => void, checks: { nag: boolean; cfn: boolean }): Report {
  const outdir = mkdtempSync(join(tmpdir(), 'loom-validation-'))
  outdirs.push(outdir)
  const app = testApp({
    outdir,
    context: {
      // Report instead of throwing, so a failure lists every finding.
      '@aws-cdk/core:failSynthOnValidationErrors': false,
      // CloudFormation's errors stay errors instead of being reported as warnings.
      ...(checks.cfn ? { '@aws-cdk/core:validateAgainstDefaultRules': true } : {}),
    },
  })
  build(app)
  if (checks.nag) Validations.of(app).addPlugins(new nag.AwsSolutionsChecks(app))
  const previous = process.env.CDK_VALIDATION
  process.env.CDK_VALIDATION = String(checks.cfn)
  try {
    const assembly = app.synth()
    return JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as Report
  } finally {
    process.env.CDK_VALIDATION = previous
  }
}

/** The data and API stacks as `infra/app.ts` deploys them by default (production, no WAF). */
function defaultStacks(app: App): void {
  const data = new DataStack(app, 'Data', { production: true })
  new ApiStack(app, 'Api', { table: data.table as unknown as ITable })
}

// One synth of the default stacks with both checks, which the AwsSolutions case and the CloudFormation case read
// (each its own plugin's findings): the stacks are the same, and a synth of every function costs seconds.
let defaultReport: Report | undefined
function defaultStacksReport(): Report {
  defaultReport ??= validationReport(defaultStacks, { nag: true, cfn: true })
  return defaultReport
}

/** The findings of the AwsSolutions pack (and the CDK's annotations) left unacknowledged, at these severities. */
function nagFindings(report: Report, severities: readonly string[] = ['error', 'fatal']): string[] {
  return report.pluginReports
    .filter((plugin) => plugin.pluginName !== CFN_VALIDATE)
    .flatMap((plugin) => plugin.violations)
    .filter((v) => severities.includes(v.severity))
    .flatMap((v) => (v.violatingConstructs ?? []).map((c) => `${v.ruleName} at ${c.constructPath}`))
}

/** Synthesises with the AwsSolutions pack as `infra/app.ts` does and returns the findings left unacknowledged. */
function nagErrors(build: (app: App) => void, severities?: readonly string[]): string[] {
  return nagFindings(validationReport(build, { nag: true, cfn: false }), severities)
}

/** What the CDK's built-in CloudFormation validation found. */
function cfnFindings(report: Report): string[] {
  return report.pluginReports
    .filter((plugin) => plugin.pluginName === CFN_VALIDATE)
    .flatMap((plugin) => plugin.violations)
    .map((v) => `${v.severity} ${v.ruleName}`)
}

// Each case synthesises every stack with cdk-nag's rule packs: 10–25 s on two busy cores, so the default 30 s
// leaves no margin when the suite shares the machine.
describe('AwsSolutions checks (cdk-nag 3)', { timeout: 120_000 }, () => {
  // First: the default stacks' case below also runs the CloudFormation validation, after which the next app takes
  // about a second longer to build (measured), so this case is not that app.
  it('leave no unacknowledged error with the opt-in WAF, whose association satisfies APIG3 without acknowledgement', () => {
    // Act
    const findings = nagErrors(
      (app) => {
        const data = new DataStack(app, 'Data', { production: true })
        new ApiStack(app, 'Api', { table: data.table as unknown as ITable, waf: {} })
      },
      ['warning', 'error', 'fatal'],
    )

    // Assess: APIG3 (a stage without a web ACL) is a warning, so warnings count here; with the WAF it is not
    // acknowledged, so only the association can satisfy it.
    expect(findings).toEqual([])
  })

  it('leave no unacknowledged error on the data and API stacks', () => {
    // Act
    const errors = nagFindings(defaultStacksReport())

    // Assess
    expect(errors).toEqual([])
  })

  it('report an unacknowledged error, so the check above can fail', () => {
    // Act
    const errors = nagErrors((app) => {
      const stack = new Stack(app, 'Bad')
      new Role(stack, 'Admin', {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('AdministratorAccess')],
      })
    })

    // Assess
    expect(errors).toEqual([
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AdministratorAccess] at Bad/Admin/Resource',
    ])
  })
})

describe("the CDK's built-in CloudFormation validation", { timeout: 120_000 }, () => {
  it('finds nothing in the data and API stacks', () => {
    // Act
    const findings = cfnFindings(defaultStacksReport())

    // Assess
    expect(findings).toEqual([])
  })

  it('reports a template CloudFormation would refuse, so the check above can fail', () => {
    // Act: a type the stacks above use, so the validation reuses the schemas and rules it loaded for them (a type it
    // has not loaded costs seconds).
    const findings = cfnFindings(
      validationReport(
        (app) => {
          const stack = new Stack(app, 'Bad')
          new CfnResource(stack, 'Logs', { type: 'AWS::Logs::LogGroup', properties: { RetentionInDays: 'soon' } })
        },
        { nag: false, cfn: true },
      ),
    )

    // Assess
    expect(findings.length).toBeGreaterThan(0)
  })
})
