// Profiles, a configuration file and pressure bands, offline: `npx tsx examples/profiles.ts`.
// The summariser is the offline ExtractiveSummarizer, so no endpoint or key is needed.
import { fileURLToPath } from 'node:url';
import {
  DefaultSessionService,
  ExtractiveSummarizer,
  InMemorySessionRepository,
  Messages,
  ResolvedConfiguration,
  createDefaultLogger,
  loadConfigurationFile,
} from 'session-compaction';
import { compactionStatsOf } from 'session-compaction/telemetry';

const logger = createDefaultLogger({ level: 'error' });
const service = new DefaultSessionService(new InMemorySessionRepository(), { logger, recordCompactionStats: true });
const { id } = await service.create({ userId: 'demo' });

// An agent run: a task, then tool calls with long outputs the model has already read.
await service.appendMessage(id, Messages.user('Find why the nightly build fails and fix it.'));
for (let step = 1; step <= 12; step++) {
  const callId = `call-${step}`;
  await service.appendMessage(
    id,
    Messages.assistant(null, {
      toolCalls: [Messages.toolCall(callId, 'bash', JSON.stringify({ command: `grep -rn error logs/build-${step}.log` }))],
      reasoning: `Step ${step}: the log of run ${step} should say which target failed.`,
    }),
  );
  await service.appendMessage(
    id,
    Messages.tool([
      Messages.toolResponse(callId, 'bash', `build-${step}: ${'warning: unused variable\n'.repeat(60)}error: link failed`),
    ]),
  );
  await service.appendMessage(id, Messages.assistant(`Run ${step} failed at the link step.`));
}

// The example configuration's 'agent' profile is pressure bands.
const file = fileURLToPath(new URL('./session-compaction.yaml', import.meta.url));
const config = new ResolvedConfiguration(loadConfigurationFile(file));
const chatClient = new ExtractiveSummarizer({ maxTokens: 200 });
// About 4,200 tokens of log plus the profile's 2,000 tokens of system prompt and tool schemas: 95 % of 6,500.
const agent = config.profiles.create('agent', { contextWindowTokens: 6500, chatClient, logger });

const preview = await service.previewCompaction(id, agent.compactionTrigger, agent.compactionStrategy);
console.log(`preview of profile '${agent.profile}': ${preview.tokensBefore} → ${preview.tokensAfter} tokens`);
for (const band of preview.stages ?? [])
  console.log(`  ${band.name.padEnd(9)} ${band.tokensBefore} → ${band.tokensAfter} tokens`);

await service.compact(id, agent.compactionTrigger, agent.compactionStrategy);
const stats = compactionStatsOf((await service.findById(id))!);
console.log(`committed: ${stats.count} compaction, ${stats.eventsArchived} events archived, ${stats.tokensSaved} tokens saved`);
