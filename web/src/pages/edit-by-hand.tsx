/**
 * Changing a configuration by hand: pick a slot of the active configuration, edit its prompt text
 * and its settings, review the difference, and propose it: the change becomes a run (synthesis
 * handler "manual") to evaluate and approve like any. A change the API refuses says why in words.
 */
import { useState } from 'preact/hooks';
import { api, client } from '../api.ts';
import { Link, navigate } from '../router.tsx';
import { useSession } from '../session.ts';
import type { Configuration } from '../types.ts';
import { ErrorNotice, Loading, useLoad, useTitle } from '../ui.tsx';
import { SettingsDiff } from './settings-diff.tsx';

type Settings = Record<string, unknown>;
/** The settings a slot's prompt text lives in, in the order looked for. */
const TEXT_KEYS = ['template', 'instructions', 'prompt', 'system'];

/** RFC 7396 merge patch from `before` to `after`, top-level keys (a removed key is null). */
export function mergePatchOf(before: Settings, after: Settings): Settings {
  const patch: Settings = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (!(key in after)) patch[key] = null;
    else if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) patch[key] = after[key];
  }
  return patch;
}

/** The edited settings (the JSON as typed, the prompt text put in its key), or what is wrong with them. */
function editedSettings(
  original: Settings,
  textKey: string | undefined,
  text: string | undefined,
  json: string | undefined,
): Settings | string {
  let settings: unknown = original;
  if (json !== undefined) {
    try {
      settings = JSON.parse(json);
    } catch (caught) {
      return `The settings are not valid JSON: ${(caught as Error).message}.`;
    }
  }
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    return 'The settings must be a JSON object, such as {"temperature": 0.2}.';
  }
  // The prompt text is edited apart from the JSON, which leaves it out.
  return textKey
    ? { ...(settings as Settings), [textKey]: text ?? original[textKey] }
    : (settings as Settings);
}

export function EditByHandPage({ pipelineId }: { pipelineId: string }) {
  useTitle('Change by hand');
  const { canWrite } = useSession();
  const loaded = useLoad(async () => {
    const pipeline = await api(client.GET('/pipelines/{pipelineId}', { params: { path: { pipelineId } } }));
    const configuration = await api(
      client.GET('/pipelines/{pipelineId}/configurations/{configurationId}', {
        params: { path: { pipelineId, configurationId: pipeline.activeConfigurationId } },
      }),
    );
    return { pipeline, configuration };
  }, [pipelineId]);
  const crumbs = (
    <p class="crumbs">
      <Link to={`pipelines/${pipelineId}`}>{loaded.data?.pipeline.name ?? 'Pipeline'}</Link> › Change by hand
    </p>
  );
  if (!loaded.data) {
    return (
      <>
        {crumbs}
        {loaded.error ? <ErrorNotice error={loaded.error} /> : <Loading what="the active configuration" />}
      </>
    );
  }
  return (
    <>
      {crumbs}
      <h1>Change {loaded.data.pipeline.name} by hand</h1>
      <p class="muted">
        Edit a slot of the active configuration (version {loaded.data.configuration.version}). Your change
        becomes a proposal to evaluate, approve and roll out like a synthesis run's.
      </p>
      {canWrite ? (
        <ChangeForm pipelineId={pipelineId} configuration={loaded.data.configuration} />
      ) : (
        <p class="notice">Viewers cannot propose changes.</p>
      )}
    </>
  );
}

/** The form's state: the slot, the edits, the change under review, and what proposing it said. */
function useDraft(pipelineId: string, configuration: Configuration) {
  const [slotId, setSlotId] = useState(configuration.slots[0]?.id ?? '');
  const slot = configuration.slots.find((candidate) => candidate.id === slotId);
  const original = (slot?.settings ?? {}) as Settings;
  const textKey = TEXT_KEYS.find((key) => typeof original[key] === 'string');
  const [text, setText] = useState<string>();
  const [json, setJson] = useState<string>();
  const [description, setDescription] = useState('');
  const [rationale, setRationale] = useState('');
  const [reviewing, setReviewing] = useState<Settings>();
  const [problem, setProblem] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const pick = (id: string) => {
    setSlotId(id);
    setText(undefined);
    setJson(undefined);
    setReviewing(undefined);
  };
  /** The edited settings: the JSON as typed, with the prompt text put in its key. */
  const review = (event: Event) => {
    event.preventDefault();
    setProblem(undefined);
    setError(undefined);
    const after = editedSettings(original, textKey, text, json);
    if (typeof after === 'string') {
      setProblem(after);
      return;
    }
    if (Object.keys(mergePatchOf(original, after)).length === 0) {
      setProblem('Nothing changed yet: edit the prompt text or a setting first.');
      return;
    }
    setReviewing(after);
  };
  const propose = async () => {
    if (!reviewing) return;
    setBusy(true);
    setError(undefined);
    try {
      const run = await api(
        client.POST('/pipelines/{pipelineId}/proposals', {
          params: { path: { pipelineId } },
          body: {
            changes: [
              {
                slotId,
                description: description.trim() || `Edit ${slot?.name ?? slotId} by hand`,
                ...(rationale.trim() ? { rationale: rationale.trim() } : {}),
                patch: mergePatchOf(original, reviewing),
              },
            ],
          },
        }),
      );
      navigate(`runs/${run.id}`);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return {
    slotId,
    slot,
    original,
    textKey,
    text,
    setText,
    json,
    setJson,
    description,
    setDescription,
    rationale,
    setRationale,
    reviewing,
    setReviewing,
    problem,
    error,
    busy,
    pick,
    review,
    propose,
  };
}

function ChangeForm({ pipelineId, configuration }: { pipelineId: string; configuration: Configuration }) {
  const {
    slotId,
    slot,
    original,
    textKey,
    text,
    setText,
    json,
    setJson,
    description,
    setDescription,
    rationale,
    setRationale,
    reviewing,
    setReviewing,
    problem,
    error,
    busy,
    pick,
    review,
    propose,
  } = useDraft(pipelineId, configuration);
  return (
    <form class="card edit-by-hand" onSubmit={review}>
      <label for="edit-slot">Slot</label>
      <select id="edit-slot" value={slotId} onChange={(event) => pick(event.currentTarget.value)}>
        {configuration.slots.map((candidate) => (
          <option key={candidate.id} value={candidate.id}>
            {candidate.name} ({candidate.kind})
          </option>
        ))}
      </select>
      {textKey ? (
        <>
          <label for="edit-text">Prompt text ({textKey})</label>
          <textarea
            id="edit-text"
            rows={6}
            value={text ?? String(original[textKey])}
            onInput={(event) => {
              setText(event.currentTarget.value);
              setReviewing(undefined);
            }}
          />
        </>
      ) : null}
      <label for="edit-settings">Settings (JSON)</label>
      <textarea
        id="edit-settings"
        rows={8}
        spellcheck={false}
        class="code"
        value={json ?? JSON.stringify(textKey ? { ...original, [textKey]: undefined } : original, null, 2)}
        onInput={(event) => {
          setJson(event.currentTarget.value);
          setReviewing(undefined);
        }}
      />
      <label for="edit-description">What the change does</label>
      <input
        id="edit-description"
        maxLength={500}
        value={description}
        placeholder={`Edit ${slot?.name ?? slotId} by hand`}
        onInput={(event) => setDescription(event.currentTarget.value)}
      />
      <label for="edit-rationale">Why (optional)</label>
      <input
        id="edit-rationale"
        maxLength={2000}
        value={rationale}
        onInput={(event) => setRationale(event.currentTarget.value)}
      />
      <div class="actions">
        <button type="submit">Review the change</button>
      </div>
      <div aria-live="polite">{problem ? <p class="notice notice-error">{problem}</p> : null}</div>
      {reviewing ? (
        <Review
          slotName={slot?.name ?? slotId}
          before={original}
          after={reviewing}
          version={configuration.version}
          busy={busy}
          onPropose={() => void propose()}
        />
      ) : null}
      <ErrorNotice error={error} />
    </form>
  );
}

function Review(props: {
  slotName: string;
  before: Settings;
  after: Settings;
  version: number;
  busy: boolean;
  onPropose: () => void;
}) {
  return (
    <section aria-labelledby="review">
      <h2 id="review">The change</h2>
      <SettingsDiff
        slotName={props.slotName}
        before={props.before}
        after={props.after}
        baseVersion={props.version}
        proposedVersion={props.version + 1}
      />
      <div class="actions">
        <button type="button" class="primary" disabled={props.busy} onClick={props.onPropose}>
          {props.busy ? 'Proposing…' : 'Propose this change'}
        </button>
      </div>
    </section>
  );
}
