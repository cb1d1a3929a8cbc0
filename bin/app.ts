import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { PipelineSynthesisStack } from '../lib/pipeline-synthesis-stack.ts';
import { stageSettings } from '../lib/stage.ts';

// `cdk synth -c stage=prod` retains data and protects tables; the default dev stage destroys all.
const app = new App();
const stage = stageSettings(String(app.node.tryGetContext('stage') ?? 'dev'));
const defaultSynthesisHandler = String(app.node.tryGetContext('defaultSynthesisHandler') ?? 'heuristic-v1');

new PipelineSynthesisStack(app, `PipelineSynthesisApi-${stage.name}`, {
  stage,
  defaultSynthesisHandler,
  description: `Pipeline Synthesis API (${stage.name})`,
});

// cdk-nag findings fail `cdk synth` unless acknowledged (with a reason) where they arise in lib/.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
