-- Ralph V2's schema (seed 000): the EF Core entities and RalphDbContext of seed 000 as EF Core's SQLite
-- provider creates them (default table names from the DbSets, columns from the properties; Guid and
-- DateTime as TEXT, enums as INTEGER, bool as INTEGER 0/1, byte[] as BLOB; the unique indexes of the
-- seed's "Indexes & Performance" table), and the table where MigrateAsync() records the migrations applied.

CREATE TABLE "__EFMigrationsHistory" (
    "MigrationId" TEXT NOT NULL CONSTRAINT "PK___EFMigrationsHistory" PRIMARY KEY,
    "ProductVersion" TEXT NOT NULL
);

CREATE TABLE "Sessions" (
    "Id" TEXT NOT NULL CONSTRAINT "PK_Sessions" PRIMARY KEY,
    "SessionId" TEXT NOT NULL,
    "UserRequest" TEXT NOT NULL,
    "CurrentState" INTEGER NOT NULL,
    "CurrentIteration" INTEGER NOT NULL,
    "CurrentWave" INTEGER NULL,
    "CurrentPlanContent" TEXT NULL,
    "DefaultModel" TEXT NOT NULL,
    "MaxConcurrency" INTEGER NOT NULL,
    "CreatedAt" TEXT NOT NULL,
    "UpdatedAt" TEXT NOT NULL,
    "CompletedAt" TEXT NULL
);

CREATE TABLE "Iterations" (
    "Id" INTEGER NOT NULL CONSTRAINT "PK_Iterations" PRIMARY KEY AUTOINCREMENT,
    "SessionId" TEXT NOT NULL,
    "IterationNumber" INTEGER NOT NULL,
    "PlanningComplete" INTEGER NOT NULL,
    "PlanningCompletedAt" TEXT NULL,
    "TasksDefined" INTEGER NOT NULL,
    "ReviewContent" TEXT NULL,
    "StartedAt" TEXT NOT NULL,
    "CompletedAt" TEXT NULL,
    CONSTRAINT "FK_Iterations_Sessions_SessionId" FOREIGN KEY ("SessionId") REFERENCES "Sessions" ("Id") ON DELETE CASCADE
);

CREATE TABLE "PlanSnapshots" (
    "Id" INTEGER NOT NULL CONSTRAINT "PK_PlanSnapshots" PRIMARY KEY AUTOINCREMENT,
    "SessionId" TEXT NOT NULL,
    "IterationNumber" INTEGER NOT NULL,
    "Content" TEXT NOT NULL,
    "CreatedAt" TEXT NOT NULL,
    CONSTRAINT "FK_PlanSnapshots_Sessions_SessionId" FOREIGN KEY ("SessionId") REFERENCES "Sessions" ("Id") ON DELETE CASCADE
);

CREATE TABLE "Tasks" (
    "Id" INTEGER NOT NULL CONSTRAINT "PK_Tasks" PRIMARY KEY AUTOINCREMENT,
    "SessionId" TEXT NOT NULL,
    "TaskId" TEXT NOT NULL,
    "Title" TEXT NOT NULL,
    "Objective" TEXT NOT NULL,
    "TaskType" INTEGER NOT NULL,
    "Status" INTEGER NOT NULL,
    "StatusAnnotation" TEXT NULL,
    "FilesJson" TEXT NULL,
    "SuccessCriteriaJson" TEXT NULL,
    "Notes" TEXT NULL,
    "WaveNumber" INTEGER NULL,
    "IterationCreated" INTEGER NOT NULL,
    "IterationUpdated" INTEGER NOT NULL,
    "CreatedAt" TEXT NOT NULL,
    "UpdatedAt" TEXT NOT NULL,
    CONSTRAINT "FK_Tasks_Sessions_SessionId" FOREIGN KEY ("SessionId") REFERENCES "Sessions" ("Id") ON DELETE CASCADE
);

CREATE TABLE "TaskDependencies" (
    "TaskItemId" INTEGER NOT NULL,
    "DependsOnTaskItemId" INTEGER NOT NULL,
    CONSTRAINT "PK_TaskDependencies" PRIMARY KEY ("TaskItemId", "DependsOnTaskItemId"),
    CONSTRAINT "FK_TaskDependencies_Tasks_DependsOnTaskItemId" FOREIGN KEY ("DependsOnTaskItemId") REFERENCES "Tasks" ("Id") ON DELETE RESTRICT,
    CONSTRAINT "FK_TaskDependencies_Tasks_TaskItemId" FOREIGN KEY ("TaskItemId") REFERENCES "Tasks" ("Id") ON DELETE RESTRICT
);

CREATE TABLE "TaskReports" (
    "Id" INTEGER NOT NULL CONSTRAINT "PK_TaskReports" PRIMARY KEY AUTOINCREMENT,
    "TaskItemId" INTEGER NOT NULL,
    "AttemptNumber" INTEGER NOT NULL,
    "IterationNumber" INTEGER NOT NULL,
    "ImplementationReport" TEXT NOT NULL,
    "ReviewReport" TEXT NULL,
    "ReviewVerdict" INTEGER NULL,
    "CreatedAt" TEXT NOT NULL,
    "ReviewedAt" TEXT NULL,
    CONSTRAINT "FK_TaskReports_Tasks_TaskItemId" FOREIGN KEY ("TaskItemId") REFERENCES "Tasks" ("Id") ON DELETE CASCADE
);

CREATE TABLE "Questions" (
    "Id" INTEGER NOT NULL CONSTRAINT "PK_Questions" PRIMARY KEY AUTOINCREMENT,
    "SessionId" TEXT NOT NULL,
    "Category" INTEGER NOT NULL,
    "IterationNumber" INTEGER NOT NULL,
    "CycleNumber" INTEGER NOT NULL,
    "QuestionId" TEXT NOT NULL,
    "QuestionText" TEXT NOT NULL,
    "Priority" INTEGER NOT NULL,
    "Status" INTEGER NOT NULL,
    "Impact" TEXT NULL,
    "QuestionType" TEXT NULL,
    "SourceIssueId" TEXT NULL,
    "Answer" TEXT NULL,
    "AnswerSource" TEXT NULL,
    "AnswerConfidence" INTEGER NULL,
    "AnswerImplication" TEXT NULL,
    "CreatedAt" TEXT NOT NULL,
    "AnsweredAt" TEXT NULL,
    CONSTRAINT "FK_Questions_Sessions_SessionId" FOREIGN KEY ("SessionId") REFERENCES "Sessions" ("Id") ON DELETE CASCADE
);

CREATE TABLE "FeedbackBatches" (
    "Id" INTEGER NOT NULL CONSTRAINT "PK_FeedbackBatches" PRIMARY KEY AUTOINCREMENT,
    "IterationId" INTEGER NOT NULL,
    "BatchTimestamp" TEXT NOT NULL,
    "Summary" TEXT NULL,
    "CreatedAt" TEXT NOT NULL,
    CONSTRAINT "FK_FeedbackBatches_Iterations_IterationId" FOREIGN KEY ("IterationId") REFERENCES "Iterations" ("Id") ON DELETE CASCADE
);

CREATE TABLE "FeedbackItems" (
    "Id" INTEGER NOT NULL CONSTRAINT "PK_FeedbackItems" PRIMARY KEY AUTOINCREMENT,
    "FeedbackBatchId" INTEGER NOT NULL,
    "IssueId" TEXT NOT NULL,
    "Severity" INTEGER NOT NULL,
    "Description" TEXT NOT NULL,
    "Evidence" TEXT NULL,
    "SuggestedFix" TEXT NULL,
    "IsResolved" INTEGER NOT NULL,
    "ResolvedAt" TEXT NULL,
    CONSTRAINT "FK_FeedbackItems_FeedbackBatches_FeedbackBatchId" FOREIGN KEY ("FeedbackBatchId") REFERENCES "FeedbackBatches" ("Id") ON DELETE CASCADE
);

CREATE TABLE "FeedbackAttachments" (
    "Id" INTEGER NOT NULL CONSTRAINT "PK_FeedbackAttachments" PRIMARY KEY AUTOINCREMENT,
    "FeedbackBatchId" INTEGER NOT NULL,
    "FileName" TEXT NOT NULL,
    "FileContent" BLOB NOT NULL,
    "Description" TEXT NULL,
    "CreatedAt" TEXT NOT NULL,
    CONSTRAINT "FK_FeedbackAttachments_FeedbackBatches_FeedbackBatchId" FOREIGN KEY ("FeedbackBatchId") REFERENCES "FeedbackBatches" ("Id") ON DELETE CASCADE
);

CREATE TABLE "ReplanningDeltas" (
    "Id" INTEGER NOT NULL CONSTRAINT "PK_ReplanningDeltas" PRIMARY KEY AUTOINCREMENT,
    "IterationId" INTEGER NOT NULL,
    "PreviousPlanSnapshotRef" TEXT NULL,
    "Summary" TEXT NULL,
    "RemovedItems" TEXT NULL,
    "AddedItems" TEXT NULL,
    "ModifiedItems" TEXT NULL,
    "Rationale" TEXT NULL,
    "CreatedAt" TEXT NOT NULL,
    CONSTRAINT "FK_ReplanningDeltas_Iterations_IterationId" FOREIGN KEY ("IterationId") REFERENCES "Iterations" ("Id") ON DELETE CASCADE
);

CREATE TABLE "Signals" (
    "Id" INTEGER NOT NULL CONSTRAINT "PK_Signals" PRIMARY KEY AUTOINCREMENT,
    "SessionId" TEXT NOT NULL,
    "SignalType" INTEGER NOT NULL,
    "Message" TEXT NULL,
    "IsProcessed" INTEGER NOT NULL,
    "CreatedAt" TEXT NOT NULL,
    "ProcessedAt" TEXT NULL,
    CONSTRAINT "FK_Signals_Sessions_SessionId" FOREIGN KEY ("SessionId") REFERENCES "Sessions" ("Id") ON DELETE CASCADE
);

CREATE TABLE "AgentInvocations" (
    "Id" INTEGER NOT NULL CONSTRAINT "PK_AgentInvocations" PRIMARY KEY AUTOINCREMENT,
    "SessionId" TEXT NOT NULL,
    "TaskItemId" INTEGER NULL,
    "AgentRole" INTEGER NOT NULL,
    "Mode" TEXT NULL,
    "Prompt" TEXT NOT NULL,
    "Response" TEXT NULL,
    "InvocationStatus" INTEGER NOT NULL,
    "DurationMs" INTEGER NULL,
    "StartedAt" TEXT NOT NULL,
    "CompletedAt" TEXT NULL,
    CONSTRAINT "FK_AgentInvocations_Sessions_SessionId" FOREIGN KEY ("SessionId") REFERENCES "Sessions" ("Id") ON DELETE CASCADE,
    CONSTRAINT "FK_AgentInvocations_Tasks_TaskItemId" FOREIGN KEY ("TaskItemId") REFERENCES "Tasks" ("Id")
);

CREATE UNIQUE INDEX "IX_Sessions_SessionId" ON "Sessions" ("SessionId");
CREATE UNIQUE INDEX "IX_Iterations_SessionId_IterationNumber" ON "Iterations" ("SessionId", "IterationNumber");
CREATE UNIQUE INDEX "IX_PlanSnapshots_SessionId_IterationNumber" ON "PlanSnapshots" ("SessionId", "IterationNumber");
CREATE UNIQUE INDEX "IX_Tasks_SessionId_TaskId" ON "Tasks" ("SessionId", "TaskId");
CREATE INDEX "IX_TaskDependencies_DependsOnTaskItemId" ON "TaskDependencies" ("DependsOnTaskItemId");
CREATE UNIQUE INDEX "IX_TaskReports_TaskItemId_AttemptNumber" ON "TaskReports" ("TaskItemId", "AttemptNumber");
CREATE UNIQUE INDEX "IX_Questions_SessionId_QuestionId" ON "Questions" ("SessionId", "QuestionId");
CREATE INDEX "IX_FeedbackBatches_IterationId" ON "FeedbackBatches" ("IterationId");
CREATE UNIQUE INDEX "IX_FeedbackItems_FeedbackBatchId_IssueId" ON "FeedbackItems" ("FeedbackBatchId", "IssueId");
CREATE INDEX "IX_FeedbackAttachments_FeedbackBatchId" ON "FeedbackAttachments" ("FeedbackBatchId");
CREATE UNIQUE INDEX "IX_ReplanningDeltas_IterationId" ON "ReplanningDeltas" ("IterationId");
CREATE INDEX "IX_Signals_SessionId_IsProcessed" ON "Signals" ("SessionId", "IsProcessed");
CREATE INDEX "IX_AgentInvocations_SessionId" ON "AgentInvocations" ("SessionId");
CREATE INDEX "IX_AgentInvocations_TaskItemId" ON "AgentInvocations" ("TaskItemId");
