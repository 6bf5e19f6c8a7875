package tools

// OriginSkills marks read_skill, which an agent gets when it has skills to
// read.
const OriginSkills = "skills"

// ReadSkill reads one skill's document by the name the index gives it.
var ReadSkill = Spec{
	Name: "read_skill",
	Description: "Read a skill: a document of know-how (a checklist, a house style, how to use an internal API) listed in the " +
		"skills index of your instructions. Read one when the task at hand matches its description, then follow it.",
	Parameters: parametersOf[ReadSkillArgs](),
	Origin:     OriginSkills,
	ReadOnly:   true,
}

// ReadSkillArgs are read_skill's arguments.
type ReadSkillArgs struct {
	Name string `json:"name" jsonschema:"The skill's name as the index gives it"`
}
