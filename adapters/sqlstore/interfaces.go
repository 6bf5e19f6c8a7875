package sqlstore

import "github.com/agents-server/agents-server/ports"

// The ports DB implements, checked at compile time.
var (
	_ ports.UserStore        = (*DB)(nil)
	_ ports.TokenStore       = (*DB)(nil)
	_ ports.InstanceRefStore = (*DB)(nil)
	_ ports.ChatGPTStore     = (*DB)(nil)
	_ ports.SettingStore     = (*DB)(nil)
	_ ports.MetaStore        = (*DB)(nil)
	_ ports.ConfigStore      = (*DB)(nil)
	_ ports.ConfigTx         = configQ{}
	_ ports.SessionStore     = (*DB)(nil)
	_ ports.SessionTx        = sessionQ{}
	_ ports.RunStore         = (*DB)(nil)
	_ ports.TraceStore       = (*DB)(nil)
	_ ports.ApprovalStore    = (*DB)(nil)
	_ ports.ProjectStore     = (*DB)(nil)
	_ ports.ProjectTx        = projectQ{}
	_ ports.AttachmentStore  = (*DB)(nil)
	// SSHHostKeyStore is the docker runtime's, wired by workbench.
	_ ports.SSHHostKeyStore   = (*DB)(nil)
	_ ports.ReplicaStore      = (*DB)(nil)
	_ ports.HookDeliveryStore = (*DB)(nil)
	_ ports.UsageStore        = (*DB)(nil)
)
